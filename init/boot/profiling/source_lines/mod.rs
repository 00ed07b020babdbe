//! The source lines of `--profile`: the plugin's blocks, each with its
//! instructions' offsets (its `shape` lines), give every instruction's
//! executions in a window (a block's instructions run as often as the
//! block); the vmlinux's DWARF maps each address to a file and line with
//! `addr2line` (gimli's reader, the one std's backtraces use); and each
//! function of the profile gets its lines' instructions per event. An
//! instruction inlined from another function counts on the line of the
//! call in the function kallsyms names, where a reader of that function
//! looks. Where the DWARF comes from, and the check that it is the booted
//! image's: [`debuginfo`] (docs/profile.md).

pub mod debuginfo;

use super::functions::{function_of, Symbolizer};
use super::windows::{BlockCount, Window};
use addr2line::gimli;
use object::{Object, ObjectSection, ObjectSymbol};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;
use trig_schema::{Profile, Report, SourceLineCost, SourceLinesFrom};

/// Each block's instruction offsets from its start, by start address and
/// instruction count (the plugin's `shape` lines).
#[derive(Debug, Default)]
pub struct Shapes(HashMap<(u64, usize), Vec<u32>>);

impl Shapes {
    /// The `shape` lines of the plugin's output; other lines are the
    /// windows' (profile.rs). A malformed one is left out: its block's
    /// instructions then count as unplaced, never wrongly placed.
    pub fn parse(text: &str) -> Shapes {
        let mut shapes = HashMap::new();
        for line in text.lines() {
            let mut fields = line.split(' ');
            if fields.next() != Some("shape") {
                continue;
            }
            let Some(addr) = fields.next().and_then(|a| u64::from_str_radix(a, 16).ok()) else {
                continue;
            };
            let offsets: Option<Vec<u32>> = fields.map(|o| o.parse().ok()).collect();
            if let Some(o) = offsets.filter(|o| !o.is_empty()) {
                shapes.entry((addr, o.len())).or_insert(o);
            }
        }
        Shapes(shapes)
    }

    /// The addresses of a block's instructions, when its shape is known
    /// and its counts are whole executions of it.
    fn instructions(&self, b: &BlockCount) -> Option<impl Iterator<Item = u64> + '_> {
        if b.execs == 0 || !b.insns.is_multiple_of(b.execs) {
            return None;
        }
        let n = (b.insns / b.execs) as usize;
        let offsets = self.0.get(&(b.addr, n))?;
        let start = b.addr;
        Some(offsets.iter().map(move |o| start + u64::from(*o)))
    }
}

/// Every instruction's executions in a window, and the instructions of
/// blocks without a shape (which no line gets).
pub fn instruction_counts(w: &Window, shapes: &Shapes) -> (HashMap<u64, u64>, u64) {
    let mut at: HashMap<u64, u64> = HashMap::new();
    let mut unplaced = 0;
    for b in &w.blocks {
        match shapes.instructions(b) {
            Some(addrs) => {
                for a in addrs {
                    *at.entry(a).or_default() += b.execs;
                }
            }
            None => unplaced += b.insns,
        }
    }
    (at, unplaced)
}

/// A vmlinux with DWARF, checked against the booted image.
#[derive(Debug, Clone, PartialEq)]
pub struct DebugInfo {
    pub path: PathBuf,
    /// Its GNU build id, hex.
    pub build_id: Option<String>,
}

/// An ELF mapped into memory, its sections read in place.
struct Mapped {
    map: memmap2::Mmap,
}

impl Mapped {
    fn open(path: &Path) -> Result<Mapped, String> {
        let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        // SAFETY: the file is only read; one truncated under us faults
        // this process, which has written its results already
        let map =
            unsafe { memmap2::Mmap::map(&f) }.map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Mapped { map })
    }

    fn elf(&self, path: &Path) -> Result<object::File<'_>, String> {
        object::File::parse(&*self.map).map_err(|e| {
            format!(
                "{} is not a complete ELF file ({e}): truncated, or not a vmlinux?",
                path.display()
            )
        })
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The GNU build id note of an ELF file, hex.
fn elf_build_id(elf: &object::File<'_>) -> Result<Option<String>, String> {
    elf.build_id()
        .map(|id| id.map(hex))
        .map_err(|e| format!("its build id note: {e}"))
}

/// The GNU build id in raw image bytes (an arm64 `Image` carries the
/// vmlinux's `.notes` as they are): the note's header, name and 20 bytes.
fn raw_build_id(bytes: &[u8]) -> Option<String> {
    const HEAD: &[u8] = b"\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU\0";
    let at = bytes.windows(HEAD.len()).position(|w| w == HEAD)?;
    bytes.get(at + HEAD.len()..at + HEAD.len() + 20).map(hex)
}

/// The build id of the image booted: an ELF's note, a bzImage's vmlinux's
/// (decompressed), or a raw image's embedded note.
pub(crate) fn image_build_id(image: &Path) -> Result<Option<String>, String> {
    let bytes = std::fs::read(image).map_err(|e| format!("{}: {e}", image.display()))?;
    if let Ok(elf) = object::File::parse(&*bytes) {
        return elf_build_id(&elf).map_err(|e| format!("{}: {e}", image.display()));
    }
    if bytes.get(0x202..0x206) == Some(b"HdrS") {
        if let Ok(elf) = crate::kernel::extract_vmlinux(&bytes) {
            if let Ok(elf) = object::File::parse(&*elf) {
                return elf_build_id(&elf).map_err(|e| format!("{}: {e}", image.display()));
            }
        }
    }
    Ok(raw_build_id(&bytes))
}

/// Checks that `path` is an ELF with line tables whose build id is the
/// image's (`None`: the image has none to check against).
pub(crate) fn check(path: &Path, image_id: Option<&str>) -> Result<DebugInfo, String> {
    let mapped = Mapped::open(path)?;
    let elf = mapped.elf(path)?;
    for name in [".debug_info", ".debug_line"] {
        let Some(s) = elf.section_by_name(name) else {
            return Err(format!(
                "{} has no DWARF ({name}): a kernel built with CONFIG_DEBUG_INFO \
                 (kconfigs/common.config), or Debian's -dbg vmlinux (--debuginfo)",
                path.display()
            ));
        };
        let compressed = s
            .compressed_file_range()
            .map_or(true, |r| r.format != object::CompressionFormat::None);
        if compressed {
            return Err(format!(
                "{}: {name} is compressed (CONFIG_DEBUG_INFO_COMPRESSED), which is not read",
                path.display()
            ));
        }
    }
    let build_id = elf_build_id(&elf).map_err(|e| format!("{}: {e}", path.display()))?;
    if let (Some(want), Some(have)) = (image_id, build_id.as_deref()) {
        if want != have {
            return Err(format!(
                "{} is another build than the image booted (build id {have}, the image's {want})",
                path.display()
            ));
        }
    }
    Ok(DebugInfo {
        path: path.to_path_buf(),
        build_id,
    })
}

/// Lexically normal: `a/b/../c` is `a/c`, `./` dropped.
fn normal(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "." | "" if !parts.is_empty() => {}
            ".." if parts.last().is_some_and(|l| *l != ".." && !l.is_empty()) => {
                parts.pop();
            }
            _ => parts.push(p),
        }
    }
    parts.join("/")
}

/// Source files as the DWARF names them, interned, and relative to the
/// kernel's source tree where it is known ([`ANCHORS`]).
#[derive(Default)]
struct Files {
    /// Where the tree's files are, as the DWARF spells it, longest first:
    /// C and assembly may be spelled apart (Debian maps C's prefix away).
    roots: Vec<String>,
    names: Vec<String>,
    index: HashMap<String, u32>,
}

/// Functions whose source file is known, which name the source tree in
/// the DWARF: C's, and the assembly's of each architecture.
const ANCHORS: [(&str, &str); 3] = [
    ("start_kernel", "init/main.c"),
    ("entry_SYSCALL_64", "arch/x86/entry/entry_64.S"),
    ("vectors", "arch/arm64/kernel/entry.S"),
];

impl Files {
    fn intern(&mut self, raw: &str) -> u32 {
        let mut name = normal(raw);
        if let Some(rest) = self
            .roots
            .iter()
            .find_map(|r| name.strip_prefix(r.as_str()))
        {
            name = rest.to_string();
        }
        let next = self.names.len() as u32;
        *self.index.entry(name).or_insert_with_key(|n| {
            self.names.push(n.clone());
            next
        })
    }

    /// Learns the roots of the build directories whose objects the image
    /// holds, from its compile `units` (source file, compile directory):
    /// ccache (TRIG_CCACHE) hands a build another directory's object,
    /// whose DWARF names that directory. Units name their sources relative
    /// to their compile directory the same way in every directory (an
    /// anchor's unit shows how), so each directory names its tree.
    fn learn_builds(&mut self, units: &[(String, String)]) {
        let rel = units.iter().find_map(|(name, _)| {
            let name = normal(name);
            ANCHORS.iter().find_map(|(_, known)| {
                let rel = name.strip_suffix(known)?;
                (rel.is_empty() || rel.ends_with('/')).then(|| rel.to_string())
            })
        });
        let Some(rel) = rel.filter(|r| !r.starts_with('/')) else {
            return; // absolute names do not depend on the directory
        };
        for (_, dir) in units.iter().filter(|(name, _)| !name.starts_with('/')) {
            let root = format!("{}/", normal(&format!("{dir}/{rel}")));
            if root != "/" {
                self.add_root(root);
            }
        }
    }

    /// Learns a root from `file`, an anchor's file as the DWARF has it.
    fn learn(&mut self, file: &str, known: &str) {
        if let Some(root) = normal(file).strip_suffix(known) {
            self.add_root(root.to_string());
        }
    }

    /// A root not known yet, kept longest first (a tree inside another's
    /// path is stripped whole).
    fn add_root(&mut self, root: String) {
        if !root.is_empty() && !self.roots.contains(&root) {
            self.roots.push(root);
            self.roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
        }
    }
}

type Dwarf<'a> = gimli::Dwarf<gimli::EndianSlice<'a, gimli::RunTimeEndian>>;
type Ctx<'a> = addr2line::Context<gimli::EndianSlice<'a, gimli::RunTimeEndian>>;

fn dwarf<'a>(elf: &object::File<'a>) -> Result<Dwarf<'a>, String> {
    let endian = if elf.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let load = |id: gimli::SectionId| -> Result<_, gimli::Error> {
        let data = elf
            .section_by_name(id.name())
            .and_then(|s| s.data().ok())
            .unwrap_or(&[]);
        Ok(gimli::EndianSlice::new(data, endian))
    };
    gimli::Dwarf::load(load).map_err(|e| format!("its DWARF: {e}"))
}

/// Each compile unit's source file and compile directory, as the DWARF
/// names them (a unit without both is left out).
fn units(dwarf: &Dwarf<'_>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut headers = dwarf.units();
    while let Ok(Some(h)) = headers.next() {
        let Ok(u) = dwarf.unit(h) else { continue };
        if let (Some(name), Some(dir)) = (u.name, u.comp_dir) {
            out.push((
                name.to_string_lossy().into_owned(),
                dir.to_string_lossy().into_owned(),
            ));
        }
    }
    out
}

/// The file and line of `addr` in the function that holds it: the
/// outermost frame's (an inlined callee's code is on its call's line).
fn outer_line<'a>(ctx: &'a Ctx<'_>, addr: u64) -> Option<(&'a str, u32)> {
    let mut frames = ctx.find_frames(addr).skip_all_loads().ok()?;
    let mut last = None;
    while let Ok(Some(f)) = frames.next() {
        if let Some(l) = f.location {
            last = l.file.zip(l.line);
        }
    }
    last
}

/// Addresses resolved to (file, line), the files interned.
pub struct Resolved {
    files: Vec<String>,
    at: HashMap<u64, (u32, u32)>,
}

/// Resolves `addrs` (run-time addresses; `slide` is run time less link
/// time, 0 without KASLR) with `debug`'s DWARF; `anchors` are the
/// run-time addresses of [`ANCHORS`] kallsyms has, with their files.
fn resolve(
    debug: &Path,
    addrs: impl IntoIterator<Item = u64>,
    slide: u64,
    anchors: &[(u64, &str)],
) -> Result<Resolved, String> {
    let mapped = Mapped::open(debug)?;
    let elf = mapped.elf(debug)?;
    let dwarf = dwarf(&elf).map_err(|e| format!("{}: {e}", debug.display()))?;
    let mut files = Files::default();
    files.learn_builds(&units(&dwarf));
    let ctx = addr2line::Context::from_dwarf(dwarf)
        .map_err(|e| format!("{}: its DWARF: {e}", debug.display()))?;
    for (a, known) in anchors {
        if let Some((f, _)) = outer_line(&ctx, a.wrapping_sub(slide)) {
            files.learn(f, known);
        }
    }
    let mut at = HashMap::new();
    for a in addrs {
        if let Some((f, line)) = outer_line(&ctx, a.wrapping_sub(slide)) {
            at.insert(a, (files.intern(f), line));
        }
    }
    Ok(Resolved {
        files: files.names,
        at,
    })
}

/// `_stext`'s run-time address less its link-time one: what KASLR moved
/// the kernel by (0 when either is unknown).
fn slide(debug: &Path, sym: &Symbolizer) -> u64 {
    let Some(run) = sym.address_of("_stext") else {
        return 0;
    };
    let link = Mapped::open(debug).ok().and_then(|m| {
        let elf = m.elf(debug).ok()?;
        let s = elf.symbols().find(|s| s.name() == Ok("_stext"))?;
        Some(s.address())
    });
    link.map_or(0, |l| run.wrapping_sub(l))
}

/// What resolving a boot's lines cost.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Cost {
    pub addresses: usize,
    pub seconds: f64,
}

impl Cost {
    /// What the lines cost against the boots' wall time.
    pub fn said(&self, sets: &[trig_schema::RunSet]) -> String {
        let boots: f64 = sets.iter().flat_map(|s| &s.runs).map(|r| r.wall_s).sum();
        let share = match boots > 0.0 {
            true => format!(
                ", {:.1}% of the boots' {boots:.1} s",
                100.0 * self.seconds / boots
            ),
            false => String::new(),
        };
        format!(
            "source lines: {} addresses resolved in {:.2} s{share}",
            self.addresses, self.seconds
        )
    }
}

/// One function's lines per event, at or above the floor, in file and
/// line order.
fn function_lines(
    counts: &HashMap<u64, u64>,
    r: &Resolved,
    sym: &Symbolizer,
    events: f64,
) -> HashMap<String, Vec<SourceLineCost>> {
    let mut by_fn: HashMap<&str, BTreeMap<(u32, u32), u64>> = HashMap::new();
    for (addr, n) in counts {
        if let Some(&(file, line)) = r.at.get(addr) {
            let f = function_of(sym.name(*addr));
            *by_fn.entry(f).or_default().entry((file, line)).or_default() += n;
        }
    }
    let per_event = |lines: BTreeMap<(u32, u32), u64>| -> Vec<SourceLineCost> {
        let mut v: Vec<SourceLineCost> = lines
            .into_iter()
            .map(|((file, line), n)| SourceLineCost {
                file: r.files[file as usize].clone(),
                line,
                insn: n as f64 / events,
            })
            .filter(|l| l.insn >= Profile::FLOOR)
            .collect();
        v.sort_by(|a, b| a.file.cmp(&b.file).then(a.line.cmp(&b.line)));
        v
    };
    by_fn
        .into_iter()
        .map(|(f, lines)| (f.to_string(), per_event(lines)))
        .collect()
}

/// Marks every profile of `report` with `source` (where the lines came
/// from, or why there are none).
fn mark(report: &mut Report, source: &SourceLinesFrom) {
    for p in report.results.iter_mut().filter_map(|r| r.profile.as_mut()) {
        p.source = Some(source.clone());
    }
}

/// Marks every profile of `report` as having no lines, and why.
pub(crate) fn unresolved(report: &mut Report, why: &str) {
    let missing = SourceLinesFrom {
        missing: Some(why.to_string()),
        ..SourceLinesFrom::default()
    };
    mark(report, &missing);
}

/// Why a profile made for `-p N`'s coherence model alone has no lines.
pub(crate) const NOT_ASKED: &str = "profiled for -p N's coherence model; --profile resolves lines";

/// Fills in the source lines of every profiled result of `report` from
/// the plugin's output and `debug`; no debug info, or DWARF that cannot
/// be read, leaves the profiles as they are and says why in each.
pub(crate) fn attach(
    report: &mut Report,
    sym: &Symbolizer,
    plugin_out: &str,
    debug: &Result<DebugInfo, String>,
) -> Result<Cost, String> {
    let start = Instant::now();
    let debug = debug.as_ref().map_err(|why| {
        unresolved(report, why);
        why.clone()
    })?;
    let shapes = Shapes::parse(plugin_out);
    let windows = super::windows::parse_windows(plugin_out)?;
    let mut counts: HashMap<u32, HashMap<u64, u64>> = HashMap::new();
    for r in report.results.iter().filter(|r| r.profile.is_some()) {
        if let Some(w) = r.window.and_then(|w| windows.get(&w).map(|c| (w, c))) {
            counts.insert(w.0, instruction_counts(w.1, &shapes).0);
        }
    }
    let addrs: std::collections::BTreeSet<u64> =
        counts.values().flat_map(|c| c.keys().copied()).collect();
    let slide = slide(&debug.path, sym);
    let anchors: Vec<(u64, &str)> = ANCHORS
        .iter()
        .filter_map(|(f, file)| Some((sym.address_of(f)?, *file)))
        .collect();
    let resolved = resolve(&debug.path, addrs.iter().copied(), slide, &anchors)
        .inspect_err(|why| unresolved(report, why))?;
    fill(report, &counts, &resolved, sym, debug);
    Ok(Cost {
        addresses: addrs.len(),
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Puts each window's lines under its profile's functions.
fn fill(
    report: &mut Report,
    counts: &HashMap<u32, HashMap<u64, u64>>,
    resolved: &Resolved,
    sym: &Symbolizer,
    debug: &DebugInfo,
) {
    let source = SourceLinesFrom {
        debuginfo: Some(debug.path.display().to_string()),
        build_id: debug.build_id.clone(),
        missing: None,
    };
    for r in &mut report.results {
        let (events, _) = super::functions::window_totals(&r.samples);
        let (Some(p), Some(w)) = (r.profile.as_mut(), r.window) else {
            continue;
        };
        p.source = Some(source.clone());
        let Some(c) = counts.get(&w).filter(|_| events > 0.0) else {
            continue;
        };
        let mut lines = function_lines(c, resolved, sym, events);
        for f in &mut p.functions {
            f.lines = lines.remove(&f.name).unwrap_or_default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiling::functions::tests::window;
    use trig_guest::kallsyms;
    use trig_schema::{BenchResult, Better, Sample, Status};

    /// gcc's vmlinux of testdata/lines-fixture.c: `add` inlined twice into
    /// `outer`, at lines 16 and 17.
    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/lines-fixture.elf")
    }

    /// `outer`'s one block: its 10 instructions' offsets.
    const SHAPE: &str = "shape 401000 0 6 8 14 20 26 29 35 41 43\n";

    /// The fixture's kallsyms.
    const KALLSYMS: &str = "0000000000401000 T outer\n0000000000403000 B _end\n";

    /// `outer`'s block run 10 times in window 0.
    fn plugin_out() -> String {
        format!("window 0\n{SHAPE}401000 100 10\nend 0\n")
    }

    fn sym() -> Symbolizer {
        Symbolizer::new(&kallsyms::parse(KALLSYMS)).unwrap()
    }

    #[test]
    fn a_block_s_instructions_run_as_often_as_it() {
        let shapes = Shapes::parse(&format!("{SHAPE}shape 401020 0 3 nonsense\n"));
        // 5 executions of outer's block, and a block of no known shape
        let w = window(&[(0x401000, 50, 5), (0x401030, 8, 2)]);
        let (at, unplaced) = instruction_counts(&w, &shapes);
        assert_eq!(at.len(), 10);
        assert_eq!(at[&0x401000], 5);
        assert_eq!(at[&0x40102b], 5);
        assert_eq!(unplaced, 8);
        // a shorter retranslation of the same start counts apart
        let shorter = Shapes::parse("shape 401000 0 6\n");
        let (at, unplaced) = instruction_counts(&window(&[(0x401000, 50, 5)]), &shorter);
        assert!(at.is_empty());
        assert_eq!(unplaced, 50);
    }

    #[test]
    fn inlined_code_is_on_the_line_of_its_call_in_the_function() {
        let r = resolve(&fixture(), [0x401000, 0x40100e, 0x40101d, 0x40102b], 0, &[]).unwrap();
        let line = |a: u64| {
            let (f, l) = r.at[&a];
            (r.files[f as usize].as_str(), l)
        };
        // add()'s own lines are 8 and 9: inlined, they are the calls'
        assert_eq!(line(0x401000), ("/src/linux/lines-fixture.c", 16));
        assert_eq!(line(0x40101d).1, 17);
        assert_eq!(line(0x40102b).1, 19);
    }

    #[test]
    fn files_are_named_from_the_source_tree() {
        let mut f = Files::default();
        f.learn(
            "/build/linux-6.1/debian/build/../../init/main.c",
            "init/main.c",
        );
        f.learn(
            "/build/linux-6.1/arch/x86/entry/entry_64.S",
            "arch/x86/entry/entry_64.S",
        );
        f.learn("init/main.c", "init/main.c");
        assert_eq!(f.roots, ["/build/linux-6.1/"]);
        let i = f.intern("/build/linux-6.1/./fs/../fs/exec.c");
        assert_eq!(f.names[i as usize], "fs/exec.c");
        let j = f.intern("lib/string.c");
        assert_eq!(f.names[j as usize], "lib/string.c");
        assert_eq!(normal("../../fs/exec.c"), "../../fs/exec.c");
        assert_eq!(normal("/a/b/../../c"), "/c");
    }

    #[test]
    fn files_of_another_build_directory_are_named_from_their_tree() {
        // start_kernel's object compiled under /home/dev/tree, exec_step's
        // under /ci/tree (a ccache hit names the directory that filled it)
        let elf = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/lines-two-builds.elf");
        let anchors = [(0x401000, "init/main.c")];
        let r = resolve(&elf, [0x401000, 0x401020], 0, &anchors).unwrap();
        let file = |a: u64| r.files[r.at[&a].0 as usize].as_str();
        assert_eq!(file(0x401000), "init/main.c");
        assert_eq!(file(0x401020), "fs/exec.c");
    }

    /// A report of one ok result in window 0, 10 events, profiled.
    fn report() -> Report {
        let run = trig_guest::recorder::Recorder::new(
            trig_guest::recorder::Sink::Plain("/dev/null".into()),
            &trig_guest::options::RunOptions::default(),
            1,
            vec![],
            false,
        );
        let mut report = run.report.lock().unwrap().clone();
        let mut r = BenchResult::new("rename-base", "rename-base", "rename", 1, Better::Higher);
        r.status = Status::Ok;
        r.window = Some(0);
        r.samples = vec![Sample {
            t_s: 1.0,
            interval_s: 1e-6,
            sampler_s: 0.0,
            warmup: false,
            bpf: 0,
            user: 10,
            mps: 10.0,
            ..Sample::default()
        }];
        report.results = vec![r];
        crate::profiling::functions::attach(
            &mut report,
            &kallsyms::parse(KALLSYMS),
            None,
            &plugin_out(),
        )
        .unwrap();
        report
    }

    #[test]
    fn a_profile_gets_its_functions_lines_per_event() {
        let (text, mut rep) = (plugin_out(), report());
        let build_id = image_build_id(&fixture()).unwrap();
        let debug = check(&fixture(), build_id.as_deref());
        let cost = attach(&mut rep, &sym(), &text, &debug).unwrap();
        assert_eq!(cost.addresses, 10);
        let p = rep.results[0].profile.as_ref().unwrap();
        assert_eq!(p.source.as_ref().unwrap().build_id, build_id);
        let lines: Vec<(u32, f64)> = p.functions[0]
            .lines
            .iter()
            .map(|l| (l.line, l.insn))
            .collect();
        // 10 instructions an event: 3 of the first add, 4 of the second,
        // the return's
        assert_eq!(lines.iter().map(|l| l.1).sum::<f64>(), 10.0, "{lines:?}");
        assert_eq!(lines.first().map(|l| l.0), Some(16), "{lines:?}");
    }

    #[test]
    fn without_debug_info_the_profile_stays_and_says_why() {
        let (text, mut rep) = (plugin_out(), report());
        let before = rep.results[0].profile.clone().unwrap();
        let why = Err("no vmlinux with DWARF at /boot/vmlinuz".to_string());
        assert!(attach(&mut rep, &sym(), &text, &why).is_err());
        let p = rep.results[0].profile.as_ref().unwrap();
        assert_eq!(p.functions, before.functions);
        let missing = p.source.as_ref().unwrap().missing.as_deref();
        assert_eq!(missing, Some("no vmlinux with DWARF at /boot/vmlinuz"));
    }

    #[test]
    fn bad_debug_info_is_named_by_its_cause() {
        let dir = std::env::temp_dir().join(format!("trig-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bytes = std::fs::read(fixture()).unwrap();
        // another build
        let e = check(&fixture(), Some("00ff")).unwrap_err();
        assert!(e.contains("another build than the image booted"), "{e}");
        // truncated
        let cut = dir.join("cut");
        std::fs::write(&cut, &bytes[..600]).unwrap();
        let e = check(&cut, None).unwrap_err();
        assert!(e.contains("not a complete ELF"), "{e}");
        // no DWARF: the sections' names gone
        let stripped = dir.join("stripped");
        let mut s = bytes.clone();
        for name in [&b".debug_info"[..], b".debug_line"] {
            let at = s.windows(name.len()).position(|w| w == name).unwrap();
            s[at + 1] = b'X';
        }
        std::fs::write(&stripped, &s).unwrap();
        let e = check(&stripped, None).unwrap_err();
        assert!(e.contains("has no DWARF"), "{e}");
        // an arm64 Image is the vmlinux's bytes: its note is found in them
        let id = image_build_id(&fixture()).unwrap().unwrap();
        assert_eq!(raw_build_id(&bytes[0x100..]), Some(id));
        let _ = std::fs::remove_dir_all(dir);
    }
}
