//! Files no path argument may name, nor any folder on the way to them.
//!
//! A path argument carries no verb: unless the policy says the tool only reads it
//! ([`Access::Read`]), the tool may write it, move it or delete it with everything below it.
//! So a protected file is refused, and so is every folder the kernel goes through to reach it
//! (`rm -r ~/.local/state` deletes the store as surely as `rm` of the store does), and anything
//! below the file (a folder created where the file is to be). Files that do not exist yet are
//! protected alike: creating one is what is refused. A tool that only reads may name the
//! folders (list the root, search `~/.local`), never the file or what would lie below it.

use std::path::{Path, PathBuf};

use super::resolve::{lexical_normalize, steps, walk};
use super::{Access, Fs, PathRules};

/// Protected files and their routes, inside the root, as [`check`](super::check) names paths
/// (relative to the root, `/`-separated, `.` for the root itself).
#[derive(Debug, Clone, Default)]
pub(super) struct Protected {
    /// Each protected file: resolved and relative to the root when inside it (else absolute,
    /// only to be named), and whether it is inside.
    files: Vec<(String, bool)>,
    /// Every place inside the root the kernel's walk to a protected file stands on: the
    /// folders it goes through (a symlink's target rather than the link, which resolves to
    /// it anyway), each with the file it leads to (an index in `files`).
    route: Vec<(String, usize)>,
    /// Some file or place is inside the root: without one, nothing needs looking at.
    any_inside: bool,
    /// The device and inode of each protected file that exists, with its name: a hard link
    /// to one is that file under a name no route leads to.
    identities: Vec<(u64, u64, String)>,
}

impl Protected {
    /// The protected file that `links` is (the same device and inode), if one is.
    pub(super) fn same_file(&self, links: super::FileLinks) -> Option<&str> {
        self.identities
            .iter()
            .find(|(dev, ino, _)| *dev == links.dev && *ino == links.ino)
            .map(|(_, _, name)| name.as_str())
    }

    /// The protected file `relative` (a path as [`check`](super::check) resolved it) is, lies
    /// on the way to (it or a folder above it is on the route; only when writing), or lies
    /// below.
    pub(super) fn reached_by(&self, relative: &str, access: Access) -> Option<&str> {
        if !self.any_inside {
            return None;
        }
        if access == Access::Read {
            return self.below_a_file(relative);
        }
        let inside = self
            .files
            .iter()
            .enumerate()
            .filter(|(_, (_, inside))| *inside)
            .map(|(index, (file, _))| (file, index));
        let mut places = self
            .route
            .iter()
            .map(|(place, index)| (place, *index))
            .chain(inside);
        let reached = if relative == "." {
            places.next()
        } else {
            places.find(|(place, _)| is_within(place, relative))
        };
        match reached {
            Some((_, index)) => Some(&self.files[index].0),
            None => self.below_a_file(relative),
        }
    }

    /// The protected file `relative` is, or lies below.
    fn below_a_file(&self, relative: &str) -> Option<&str> {
        self.files
            .iter()
            .find(|(file, inside)| *inside && is_within(relative, file))
            .map(|(file, _)| file.as_str())
    }
}

/// Whether `inner` is `outer` or below it, by whole components, ignoring ASCII case: on a
/// file system that ignores case (macOS's, by default) `.LOCAL/State` is the store's folder.
/// Where case matters, refusing a name that differs only in case costs little.
fn is_within(inner: &str, outer: &str) -> bool {
    let (inner, outer) = (inner.as_bytes(), outer.as_bytes());
    inner.len() >= outer.len()
        && inner[..outer.len()].eq_ignore_ascii_case(outer)
        && (inner.len() == outer.len() || inner[outer.len()] == b'/')
}

impl PathRules {
    /// These rules, refusing also each of `files` (absolute; a relative one is taken from the
    /// root), every folder on the way to it and anything below it, whether it exists or not
    /// (see [`PathError::Protected`](super::PathError::Protected)). Each file is walked the way
    /// the kernel opens it, through `..` and symlinks, so every spelling of it and of its
    /// folders is told by the resolved path an argument comes to. Only what lies inside the
    /// root counts: nothing outside it can be named.
    pub fn protecting(mut self, files: &[PathBuf], fs: &dyn Fs) -> PathRules {
        let mut protected = Protected::default();
        for file in files {
            let file = self.root.join(file);
            let mut route = Vec::new();
            let everywhere = Path::new("/");
            let end = match walk(
                PathBuf::from("/"),
                steps(&file),
                everywhere,
                fs,
                &mut |place| route.push(place.to_path_buf()),
            ) {
                Ok(end) => end,
                // A loop or a per-process link on the way: the file as written, then.
                Err(_) => {
                    let written = lexical_normalize(&file);
                    route = written.ancestors().skip(1).map(Path::to_path_buf).collect();
                    written
                }
            };
            if let Ok(Some(links)) = fs.file_links(&end) {
                protected
                    .identities
                    .push((links.dev, links.ino, end.display().to_string()));
            }
            let index = protected.files.len();
            match self.relative(&end) {
                Ok(relative) => protected.files.push((relative, true)),
                Err(_) => protected.files.push((end.display().to_string(), false)),
            }
            for place in route.iter().filter(|place| **place != end) {
                if let Ok(relative) = self.relative(place)
                    && !protected.route.iter().any(|(known, _)| *known == relative)
                {
                    protected.route.push((relative, index));
                }
            }
        }
        protected.any_inside =
            !protected.route.is_empty() || protected.files.iter().any(|(_, inside)| *inside);
        self.protected = protected;
        // Answers remembered for the rules as they were no longer hold.
        self.id = super::rules::next_id();
        self
    }
}
