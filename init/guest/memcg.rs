//! A memory cgroup of its own for a run (htab-mem's, as upstream's
//! cgroup_setup_and_join("/htab_mem")): the process joins it before its
//! maps are made, so that what the kernel allocates for them is charged
//! there and its memory.current and memory.peak are the maps' (and the
//! producers' stacks and pages, as upstream's).

use crate::bpf::Failure;
use nix::mount::{mount, umount, MsFlags};
use std::fs;
use std::path::{Path, PathBuf};

/// A cgroup the process is in until dropped.
pub struct MemCgroup {
    /// The cgroup.procs of the cgroup the process came from, once it has
    /// left it.
    back: Option<PathBuf>,
    dir: PathBuf,
    /// The mount made for it, where cgroup2 was not mounted at its root.
    mounted: Option<PathBuf>,
}

/// Where cgroup2's root is mounted, from /proc/self/mountinfo.
fn cgroup2_root() -> Option<PathBuf> {
    let info = fs::read_to_string("/proc/self/mountinfo").ok()?;
    info.lines().find_map(|line| {
        let (mine, theirs) = line.split_once(" - ")?;
        let f: Vec<&str> = mine.split_whitespace().collect();
        let fstype = theirs.split_whitespace().next()?;
        match (fstype, f.get(3), f.get(4)) {
            ("cgroup2", Some(&"/"), Some(at)) => Some(PathBuf::from(at)),
            _ => None,
        }
    })
}

/// The process's cgroup in cgroup2's hierarchy (`0::PATH` of
/// /proc/self/cgroup; the root where it has none).
fn own_cgroup() -> String {
    let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    own.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .unwrap_or("/")
        .to_string()
}

fn write(path: &Path, what: &str) -> Result<(), String> {
    fs::write(path, what).map_err(|e| format!("writing '{what}' to {}: {e}", path.display()))
}

impl MemCgroup {
    /// Makes the cgroup `name` under cgroup2's root (mounting cgroup2
    /// where it is not), with the memory controller, and moves the
    /// process into it. Unsupported: the kernel or the machine has no
    /// memory controller on cgroup2; failed: it could not be set up.
    pub fn join(name: &str) -> Result<MemCgroup, Failure> {
        Self::join_at(name).map_err(|(unsupported, why)| match unsupported {
            true => Failure::Unsupported(why),
            false => Failure::Failed(why),
        })
    }

    fn join_at(name: &str) -> Result<MemCgroup, (bool, String)> {
        let failed = |why: String| (false, why);
        let (root, mounted) = match cgroup2_root() {
            Some(root) => (root, None),
            None => {
                let at =
                    std::env::temp_dir().join(format!("trig-init-cgroup2.{}", std::process::id()));
                fs::create_dir_all(&at)
                    .map_err(|e| failed(format!("creating {}: {e}", at.display())))?;
                mount(
                    Some("cgroup2"),
                    &at,
                    Some("cgroup2"),
                    MsFlags::empty(),
                    None::<&str>,
                )
                .map_err(|e| failed(format!("mount -t cgroup2 {}: {e}", at.display())))?;
                (at.clone(), Some(at))
            }
        };
        let mut cg = MemCgroup {
            back: None,
            dir: root.join(name),
            mounted,
        };
        let controllers = fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
        if !controllers.split_whitespace().any(|c| c == "memory") {
            return Err((
                true,
                format!(
                    "no memory controller in cgroup2 at {} (it has: {}): the kernel lacks \
                     CONFIG_MEMCG, or cgroup v1 holds the controller",
                    root.display(),
                    controllers.trim()
                ),
            ));
        }
        write(&root.join("cgroup.subtree_control"), "+memory").map_err(failed)?;
        // a cgroup left by a killed run of the same process id is taken
        // over
        if let Err(e) = fs::create_dir(&cg.dir) {
            if e.kind() != std::io::ErrorKind::AlreadyExists {
                return Err(failed(format!("creating {}: {e}", cg.dir.display())));
            }
        }
        let from = root.join(own_cgroup().trim_start_matches('/'));
        let pid = std::process::id().to_string();
        write(&cg.dir.join("cgroup.procs"), &pid).map_err(failed)?;
        cg.back = Some(from.join("cgroup.procs"));
        Ok(cg)
    }

    fn read(&self, file: &str) -> Option<u64> {
        fs::read_to_string(self.dir.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// The memory charged to it now, in bytes.
    pub fn current(&self) -> Option<u64> {
        self.read("memory.current")
    }

    /// The most charged to it at once since it was made (5.19+).
    pub fn peak(&self) -> Option<u64> {
        self.read("memory.peak")
    }
}

impl Drop for MemCgroup {
    fn drop(&mut self) {
        // best effort: back to the root, the cgroup removed (its charges
        // stay with it until freed), the mount undone
        if let Some(back) = &self.back {
            let _ = fs::write(back, std::process::id().to_string());
        }
        let _ = fs::remove_dir(&self.dir);
        if let Some(at) = &self.mounted {
            let _ = umount(at);
            let _ = fs::remove_dir(at);
        }
    }
}
