//! The boot engine: runs one QEMU guest until it powers off, crashes or
//! runs out of time, and tells what happens as [`BootEvent`]s over a
//! channel. It judges nothing (see `judge`) and prints nothing (see `ui`).

use crate::boot::console::{self, Console};
use crate::boot::kernel::Arch;
use crate::boot::qemu;
use crate::boot::signals;
use crate::report::BootStatus;
use nix::sys::signal::Signal;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the host waits after a panic line for the rest of the oops
/// before it kills QEMU (the guest may have been booted with `panic=0`).
const PANIC_GRACE: Duration = Duration::from_secs(5);

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
    pub hung: bool,
    /// The signal that ended this boot early.
    pub interrupted: Option<Signal>,
    pub wall: f64,
    pub boot_s: Option<f64>,
    pub qemu_stderr: String,
}

/// How to run one guest.
pub struct BootSpec<'a> {
    pub arch: Arch,
    pub args: &'a [String],
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
    fn spawn(arch: Arch, args: &[String]) -> Result<Qemu, String> {
        let bin = qemu::binary(arch);
        let mut cmd = Command::new(bin);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
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

    /// Waits for QEMU to end. How it exited says nothing the console has
    /// not: power-off, reboot and a kill all end it.
    fn wait(&mut self) -> Result<(), String> {
        self.child
            .wait()
            .map(drop)
            .map_err(|e| format!("waiting for {}: {e}", self.bin))
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
}

impl Watch<'_> {
    /// Takes a console line and sends what it meant; progress only while
    /// `live` (not from what is drained after a kill).
    fn feed(&mut self, line: &str, live: bool) {
        let (frames, crash) = (self.console.frames.len(), self.console.crash.len());
        let progress = self.console.feed(line);
        let send = |e| {
            let _ = self.events.send(e);
        };
        for f in &self.console.frames[frames..] {
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
pub fn boot(spec: &BootSpec, events: &Sender<BootEvent>) -> Result<Boot, String> {
    let mut qemu = Qemu::spawn(spec.arch, spec.args)?;
    let start = Instant::now();
    let _ = events.send(BootEvent::Started {
        label: spec.label.to_string(),
    });
    // bounded: a guest that floods the console waits for the host
    let (tx, lines) = mpsc::sync_channel(4096);
    let stdout = qemu.child.stdout.take().expect("piped");
    std::thread::spawn(move || {
        console::read_lines(stdout, console::MAX_LINE, |line| tx.send(line).is_ok())
    });
    let err_reader = keep_stderr(&mut qemu.child);
    let mut watch = Watch {
        console: Console::default(),
        events,
        label: spec.label,
        start,
        boot_s: None,
    };
    let (hung, interrupted) = watch_until_end(&mut watch, &lines, &mut qemu, spec);
    qemu.wait()?;
    let mut console = watch.console;
    console.close();
    let wall = start.elapsed().as_secs_f64();
    let _ = events.send(BootEvent::Finished { wall });
    Ok(Boot {
        console,
        hung,
        interrupted,
        wall,
        boot_s: watch.boot_s,
        qemu_stderr: err_reader.join().unwrap_or_default(),
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

/// Feeds the console until it ends, or kills QEMU when the boot runs
/// late, has panicked a while ago or trig-init got a signal. Returns
/// whether it hung, and the signal.
fn watch_until_end(
    watch: &mut Watch,
    lines: &mpsc::Receiver<String>,
    qemu: &mut Qemu,
    spec: &BootSpec,
) -> (bool, Option<Signal>) {
    let mut panicked_at = None;
    let mut interrupted = None;
    loop {
        match lines.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => watch.feed(&line, true),
            Err(mpsc::RecvTimeoutError::Disconnected) => return (false, interrupted),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if watch.console.panicked {
            panicked_at.get_or_insert_with(Instant::now);
        }
        interrupted = signals::caught();
        let elapsed = watch.start.elapsed();
        let late = elapsed > spec.timeout
            || spec
                .give_up
                .is_some_and(|g| !watch.console.reached_init && elapsed > g);
        let dead = panicked_at.is_some_and(|t: Instant| t.elapsed() > PANIC_GRACE);
        if late || dead || interrupted.is_some() {
            qemu.kill();
            // drain what was printed before the kill
            while let Ok(line) = lines.recv_timeout(Duration::from_millis(500)) {
                watch.feed(&line, false);
            }
            return (late && !dead, interrupted);
        }
    }
}
