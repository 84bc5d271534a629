//! The journal's reserve (zeros written ahead of the records, so that a commit writes over
//! blocks the file has), taking back bytes written into it, and reading the records
//! appended to it since a handle last looked.

use super::fsutil;
use super::journal;
use crate::error::Result;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// The journal's reserve: zeros written ahead of the records in steps of a quarter of the
/// snapshot (what the journal holds before it is compacted), between 64 KiB and 1 MiB. A
/// record then goes over blocks the file already has, so a commit's `fdatasync` writes the
/// record's block and nothing of the file's own (its size, its allocation: space reserved
/// with `fallocate` is still marked unwritten, and the first write into it changes that).
const RESERVE_MIN: u64 = 64 << 10;
const RESERVE_MAX: u64 = 1 << 20;

/// Reserves the journal's space past `len` (the file's length) so that `need` bytes fit;
/// returns the new length. A reserve that does not fit (a full disk, a file size limit) is
/// taken back: the write itself then says whether its record fits.
pub(super) fn reserve(f: &File, len: u64, need: u64, snapshot_len: u64) -> u64 {
    let step = (snapshot_len / 4).clamp(RESERVE_MIN, RESERVE_MAX);
    let to = (need + step).div_ceil(RESERVE_MIN) * RESERVE_MIN;
    let zeros = vec![0u8; (to - len) as usize];
    match f.write_all_at(&zeros, len) {
        Ok(()) => to,
        Err(_) => {
            let _ = f.set_len(len);
            len
        }
    }
}

/// Takes back the bytes written at `from..to`: zeros over them, and the file cut back to
/// `len` (its length before they were written) if they grew it; so the file is as it was,
/// its reserve kept. When the zeros cannot be written the file is cut at `from`. Returns
/// the file's length.
pub(super) fn erase(f: &File, from: u64, to: u64, len: u64) -> u64 {
    if f.metadata().is_ok_and(|m| m.len() > len) && f.set_len(len).is_err() {
        let _ = f.set_len(from);
        return from;
    }
    let zeros = vec![0u8; to.min(len).saturating_sub(from) as usize];
    match f.write_all_at(&zeros, from) {
        // Past a file size limit nothing was written either.
        Err(e) if e.raw_os_error() != Some(libc::EFBIG) => {
            let _ = f.set_len(from);
            from
        }
        _ => len,
    }
}

/// Reads the records from `from` on, up to the file's length `len`, in growing chunks: most
/// reads find nothing new (the first bytes are the reserve's zeros). `before`: the number
/// of the record that ends at `from`.
pub(super) fn read_records(
    f: &File,
    path: &Path,
    from: u64,
    len: u64,
    before: u64,
) -> Result<(Vec<u8>, journal::Scan)> {
    let avail = len - from;
    let mut want = avail.min(4096);
    loop {
        let mut buf = vec![0u8; want as usize];
        f.read_exact_at(&mut buf, from)
            .map_err(|e| fsutil::describe(path, &e))?;
        let scan = journal::scan(&buf, path, from, Some(before))?;
        // The chunk may end inside a record, or right after one with more to come.
        let more = scan.torn > 0 || scan.valid_len == buf.len();
        if !more || want == avail {
            return Ok((buf, scan));
        }
        want = (want * 16).min(avail);
    }
}
