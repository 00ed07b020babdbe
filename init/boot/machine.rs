//! The boot engine: runs one QEMU guest until it powers off, crashes or
//! runs out of time, and tells what happens as [`BootEvent`]s over a
//! channel. It judges nothing (see `judge`) and prints nothing (see `ui`).

use crate::console::{self, Console};
use crate::kernel::Arch;
use crate::qemu;
use crate::signals;
use nix::sys::signal::Signal;
use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use trig_schema::frame;
use trig_schema::{BootStatus, Timeline};

/// How long the host waits after a panic line for the rest of the oops
/// before it kills QEMU (the guest may have been booted with `panic=0`).
const PANIC_GRACE: Duration = Duration::from_secs(5);

/// How often the host looks for more console output, and whether QEMU
/// is gone.
const POLL: Duration = Duration::from_millis(20);

/// Console output read between two holes punched into its file.
const FREE_EVERY: u64 = 8 << 20;

/// QEMU's own messages kept per boot.
const KEEP_STDERR: u64 = 1 << 20;

/// What happens during a `vm` command, in order: the engine's events for
/// each boot, and the command's own between boots. A UI renders them.
#[derive(Debug, Clone, PartialEq)]
pub enum BootEvent {
    /// QEMU started boot `label` (`2/5`, or `3/10 k2` with several kernels).
    Started { label: String },
    /// The guest of boot `label` started its `i`-th of `n` benchmarks, `t`
    /// s into the boot (boots may run side by side: `--jobs`).
    Progress {
        label: String,
        i: usize,
        n: usize,
        name: String,
        t: f64,
    },
    /// A whole frame of this kind came from the guest.
    Frame { kind: String },
    /// The line that says the kernel crashed.
    Crash(String),
    /// QEMU is gone, `wall` s after it started.
    Finished { wall: f64 },
    /// Something the user should know that ends nothing (a fallback, a
    /// file not written).
    Notice(String),
    /// The command's verdict on a boot of `kernel`.
    Judged {
        label: String,
        kernel: String,
        status: BootStatus,
        wall_s: f64,
        message: Option<String>,
    },
}

/// What one boot left.
pub struct Boot {
    pub console: Console,
    /// Killed after [`BootSpec::timeout`] without progress.
    pub hung: bool,
    /// The signal that ended this boot early.
    pub interrupted: Option<Signal>,
    pub wall: f64,
    pub boot_s: Option<f64>,
    pub timeline: Timeline,
    pub qemu_stderr: String,
    /// How QEMU ended (None: it could not be waited for).
    pub qemu_exit: Option<ExitStatus>,
}

/// How to run one guest.
pub struct BootSpec<'a> {
    pub arch: Arch,
    pub args: &'a [String],
    /// How long the guest may go without progress (a line of trig-init's
    /// on its console) before it is hung; no bound on the whole boot, so
    /// a guest still writing is never cut.
    pub timeout: Duration,
    /// Ends a boot that has not reached /init by then.
    pub give_up: Option<Duration>,
    pub label: &'a str,
}

/// A running QEMU, killed and reaped when dropped, on every path out.
struct Qemu {
    child: Child,
    bin: &'static str,
}

impl Qemu {
    /// Starts QEMU with `console` (its serial port, `-serial stdio`) as
    /// its stdout.
    fn spawn(arch: Arch, args: &[String], console: File) -> Result<Qemu, String> {
        let bin = qemu::binary(arch);
        let mut cmd = Command::new(bin);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(console)
            .stderr(Stdio::piped());
        signals::die_with_parent(&mut cmd);
        // ETXTBSY: another thread of this process forked while the file
        // was open for writing (a QEMU wrapper script just written); the
        // child closes it at exec, so a retry soon succeeds
        let mut tries = 0;
        let child = loop {
            match cmd.spawn() {
                Err(e) if e.raw_os_error() == Some(nix::libc::ETXTBSY) && tries < 50 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                r => break r,
            }
        }
        .map_err(|e| format!("cannot start {bin}: {e} (is QEMU installed?)"))?;
        Ok(Qemu { child, bin })
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
    }

    /// How QEMU ended, once it has; an error if it cannot be waited for
    /// (then it is taken as gone).
    fn ended(&mut self) -> Result<Option<ExitStatus>, String> {
        self.child
            .try_wait()
            .map_err(|e| format!("waiting for {}: {e}", self.bin))
    }
}

/// The file that takes a guest's console: QEMU's stdout, named in the
/// temporary directory only until both ends are open. A regular file,
/// never a pipe: QEMU makes its stdout non-blocking, so a pipe that the
/// host drains late refuses QEMU's writes, and the guest then waits on its
/// serial port, idle, while icount (`sleep=off`) jumps its clock to the
/// next timer at each idle: the host's load became guest time, and a
/// profiled boot reading 20 kB/s powered off at 12,733 guest seconds
/// instead of 4.75, its watchdog fired. A file takes every write at once.
/// Returns QEMU's end and the host's.
fn console_file() -> std::io::Result<(File, File)> {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let path = std::env::temp_dir().join(format!(
        "trig-init-console-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let qemu_end = File::options().append(true).create_new(true).open(&path)?;
    let host_end = File::open(&path);
    // gone with its last descriptor, however trig-init ends
    let _ = std::fs::remove_file(&path);
    Ok((qemu_end, host_end?))
}

/// Reads a console file that QEMU is still writing: a read waits until
/// there is more or QEMU is gone (`ended`); then what QEMU wrote is read
/// to its end, and nothing after it (a process QEMU left behind). What was
/// read is punched out of the file, so that a guest that floods its
/// console costs no disk.
struct Follow {
    file: File,
    pos: u64,
    freed: u64,
    ended: Arc<AtomicBool>,
    /// The file's length when QEMU was seen gone.
    end: Option<u64>,
}

impl Read for Follow {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if self.end.is_none() && self.ended.load(Ordering::SeqCst) {
                self.end = Some(self.file.metadata()?.len());
            }
            let room = self
                .end
                .map_or(buf.len() as u64, |e| e.saturating_sub(self.pos));
            let take = buf.len().min(room.try_into().unwrap_or(usize::MAX));
            let n = self.file.read_at(&mut buf[..take], self.pos)?;
            if n > 0 || self.end.is_some() {
                self.pos += n as u64;
                self.free();
                return Ok(n);
            }
            std::thread::sleep(POLL);
        }
    }
}

impl Follow {
    fn free(&mut self) {
        if self.pos - self.freed < FREE_EVERY {
            return;
        }
        use nix::fcntl::{fallocate, FallocateFlags};
        let upto = self.pos & !0xfff;
        let flags = FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE;
        // a file system without holes keeps the bytes: only disk is lost
        let _ = fallocate(self.file.as_raw_fd(), flags, 0, upto as i64);
        self.freed = upto;
    }
}

impl Drop for Qemu {
    fn drop(&mut self) {
        // a reaped child is not signalled again
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The boot's console as it is watched: what it said and what the engine
/// made of it so far.
struct Watch<'a> {
    console: Console,
    events: &'a Sender<BootEvent>,
    label: &'a str,
    start: Instant,
    boot_s: Option<f64>,
    timeline: Timeline,
    /// When a line of trig-init's last came (or QEMU started).
    progressed: Instant,
}

impl Watch<'_> {
    /// Takes a console line and sends what it meant; progress only while
    /// `live` (not from what is drained after a kill).
    fn feed(&mut self, line: &str, live: bool) {
        let (frames, crash) = (self.console.frames.len(), self.console.crash.len());
        let progress = self.console.feed(line);
        if live && frame::is_ours(line) {
            self.progressed = Instant::now();
        }
        let send = |e| {
            let _ = self.events.send(e);
        };
        for f in &self.console.frames[frames..] {
            if f.kind == frame::REPORT && self.timeline.report_s.is_none() {
                self.timeline.report_s = Some(self.start.elapsed().as_secs_f64());
            }
            send(BootEvent::Frame {
                kind: f.kind.clone(),
            });
        }
        if crash == 0 && !self.console.crash.is_empty() {
            send(BootEvent::Crash(self.console.crash[0].clone()));
        }
        if let Some((i, n, name)) = progress.filter(|_| live) {
            let t = self.start.elapsed().as_secs_f64();
            self.boot_s.get_or_insert(t);
            self.timeline.starts.push((name.clone(), t));
            send(BootEvent::Progress {
                label: self.label.to_string(),
                i,
                n,
                name,
                t,
            });
        }
    }
}

/// Runs one guest to its end, sending its events; only a QEMU that cannot
/// be run is an error.
pub(crate) fn boot(spec: &BootSpec, events: &Sender<BootEvent>) -> Result<Boot, String> {
    let (qemu_end, host_end) = console_file().map_err(|e| {
        format!(
            "cannot make the console's file in {}: {e}",
            std::env::temp_dir().display()
        )
    })?;
    let mut qemu = Qemu::spawn(spec.arch, spec.args, qemu_end)?;
    let start = Instant::now();
    let _ = events.send(BootEvent::Started {
        label: spec.label.to_string(),
    });
    let ended = Arc::new(AtomicBool::new(false));
    let follow = Follow {
        file: host_end,
        pos: 0,
        freed: 0,
        ended: ended.clone(),
        end: None,
    };
    // bounded: the reader waits for the engine, the guest never does
    let (tx, lines) = mpsc::sync_channel(4096);
    std::thread::spawn(move || {
        console::read_lines(follow, console::MAX_LINE, |line| tx.send(line).is_ok())
    });
    let err_reader = keep_stderr(&mut qemu.child);
    let mut watch = Watch {
        console: Console::default(),
        events,
        label: spec.label,
        start,
        boot_s: None,
        timeline: Timeline::default(),
        progressed: start,
    };
    let end = watch_until_end(&mut watch, &lines, &mut qemu, &ended, spec)?;
    let mut console = watch.console;
    console.close();
    let wall = start.elapsed().as_secs_f64();
    let _ = events.send(BootEvent::Finished { wall });
    Ok(Boot {
        console,
        hung: end.hung,
        interrupted: end.interrupted,
        wall,
        boot_s: watch.boot_s,
        timeline: watch.timeline,
        qemu_stderr: err_reader.join().unwrap_or_default(),
        qemu_exit: end.exit,
    })
}

/// The first [`KEEP_STDERR`] bytes of QEMU's messages, read on a thread.
fn keep_stderr(child: &mut Child) -> JoinHandle<String> {
    let mut stderr = child.stderr.take().expect("piped");
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let _ = (&mut stderr).take(KEEP_STDERR).read_to_end(&mut kept);
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        String::from_utf8_lossy(&kept).into_owned()
    })
}

/// How a boot ended.
struct End {
    hung: bool,
    interrupted: Option<Signal>,
    exit: Option<ExitStatus>,
}

/// Feeds the console until QEMU is gone and every byte it wrote is read,
/// or kills QEMU when the guest has made no progress for the timeout, has
/// panicked a while ago or trig-init got a signal.
fn watch_until_end(
    watch: &mut Watch,
    lines: &mpsc::Receiver<String>,
    qemu: &mut Qemu,
    ended: &AtomicBool,
    spec: &BootSpec,
) -> Result<End, String> {
    let mut panicked_at = None;
    let mut end = End {
        hung: false,
        interrupted: None,
        exit: None,
    };
    let mut killed = false;
    let mut looked = Instant::now();
    loop {
        match lines.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => watch.feed(&line, !killed),
            // the reader is done: QEMU is gone and its output read
            Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(end),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if looked.elapsed() >= POLL && !ended.load(Ordering::SeqCst) {
            looked = Instant::now();
            match qemu.ended() {
                Ok(None) => {}
                Ok(Some(status)) => {
                    end.exit = Some(status);
                    ended.store(true, Ordering::SeqCst);
                }
                Err(e) => {
                    ended.store(true, Ordering::SeqCst);
                    return Err(e);
                }
            }
        }
        if killed || ended.load(Ordering::SeqCst) {
            continue;
        }
        if watch.console.panicked {
            panicked_at.get_or_insert_with(Instant::now);
        }
        end.interrupted = signals::caught();
        let stalled = watch.progressed.elapsed() > spec.timeout
            || spec
                .give_up
                .is_some_and(|g| !watch.console.reached_init && watch.start.elapsed() > g);
        let dead = panicked_at.is_some_and(|t: Instant| t.elapsed() > PANIC_GRACE);
        if stalled || dead || end.interrupted.is_some() {
            // what it printed before the kill is still read
            qemu.kill();
            killed = true;
            end.hung = stalled && !dead;
        }
    }
}
