//! The file format of the compiled-code caches on disk (CUDA's PTX/CUBIN entries, Vulkan's
//! pipeline caches), in one place: a file is a header line (the key in words), a line with the
//! body's length and checksum, and the body. A file that does not match its key, is cut short
//! or is damaged is reported as [`Lookup::Damaged`] with the reason, and the caller compiles
//! again; files are written atomically (a temporary file renamed into place), so concurrent
//! processes never read half a file.

use std::path::Path;

/// 128-bit FNV-1a (two 64-bit lanes with different offsets): a cache key, and the checksum of
/// a cache entry against accidental damage (not against tampering).
pub(crate) fn hash128(parts: &[&[u8]]) -> u128 {
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x6c62_272e_07bb_0142;
    for p in parts {
        for &x in p.iter().chain(&[0xff]) {
            a = (a ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3);
            b = (b ^ x as u64)
                .wrapping_mul(0x0000_0100_0000_01b3)
                .rotate_left(5);
        }
    }
    ((a as u128) << 64) | b as u128
}

/// What a cache file holds for a key.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// The cached body, whole.
    Hit(Vec<u8>),
    /// No file (or one that cannot be read).
    Miss,
    /// A file that is not a whole entry for this key: why.
    Damaged(String),
}

/// One cache's entries, named in its messages: what a key identifies (`"kernel"`) and what a
/// body is (`"compiled code"`).
pub(crate) struct EntryFormat {
    /// What one key identifies, for "its header is not this {item}'s key".
    pub(crate) item: &'static str,
    /// What a body holds, for "N bytes of {body} where its length line says M".
    pub(crate) body: &'static str,
}

impl EntryFormat {
    /// The contents of a cache file: the header, a line with the body's length and checksum,
    /// and the body.
    pub(crate) fn entry(&self, header: &str, body: &[u8]) -> Vec<u8> {
        let mut contents = format!(
            "{header}\n// length {}, checksum {:032x}\n",
            body.len(),
            hash128(&[body])
        )
        .into_bytes();
        contents.extend_from_slice(body);
        contents
    }

    /// Reads the cache file `file` for the key `header`, checking the header, the body's
    /// length and its checksum.
    pub(crate) fn lookup(&self, file: &Path, header: &str) -> Lookup {
        let Ok(bytes) = std::fs::read(file) else {
            return Lookup::Miss;
        };
        let Some(rest) = bytes
            .strip_prefix(header.as_bytes())
            .and_then(|t| t.strip_prefix(b"\n"))
        else {
            return Lookup::Damaged(format!("its header is not this {}'s key", self.item));
        };
        let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
            return Lookup::Damaged("it has no length and checksum line".into());
        };
        let (line, body) = (&rest[..nl], &rest[nl + 1..]);
        let parsed = std::str::from_utf8(line).ok().and_then(|l| {
            let (len, sum) = l.strip_prefix("// length ")?.split_once(", checksum ")?;
            Some((
                len.parse::<usize>().ok()?,
                u128::from_str_radix(sum, 16).ok()?,
            ))
        });
        let Some((len, sum)) = parsed else {
            return Lookup::Damaged("its length and checksum line is unreadable".into());
        };
        if body.len() != len {
            return Lookup::Damaged(format!(
                "{} bytes of {} where its length line says {len}",
                body.len(),
                self.body
            ));
        }
        if hash128(&[body]) != sum {
            return Lookup::Damaged("its checksum does not match its contents".into());
        }
        Lookup::Hit(body.to_vec())
    }

    /// Writes a cache file atomically (a temporary file renamed into place), so that
    /// concurrent processes never read half a file. Failures are ignored: the cache is only a
    /// cache.
    pub(crate) fn store(&self, file: &Path, contents: &[u8]) {
        let Some(dir) = file.parent() else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            file.file_name().and_then(|n| n.to_str()).unwrap_or("entry"),
            std::process::id()
        ));
        if std::fs::write(&tmp, contents).is_ok() && std::fs::rename(&tmp, file).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}
