//! A snapshot's nodes as a writer copies them: the bytes of the nodes nothing changed since
//! the snapshot was read, as they are there, the others from their values.

use super::paged::{Paged, Span};
use crate::id::Id;
use crate::model::Node;
use crate::state::layered::Layered;



/// One live node as a snapshot writer gets it: the bytes a snapshot holds it as, when
/// nothing changed it since, or its value.
pub enum Piece<'a> {
    Bytes { id: Id, json: &'a [u8] },
    Node(&'a Node),
}

/// Whether the spans, in list order, are exactly the elements of the nodes' list as its
/// writer puts them: `[`, each node's bytes (an object), one `,` between, `]`.
fn tiles(list: &[u8], spans: &[Span]) -> bool {
    let mut next = 1u64;
    if list.first() != Some(&b'[') {
        return false;
    }
    for (k, &(_, at, len)) in spans.iter().enumerate() {
        let Some(end) = at.checked_add(len).filter(|_| at == next && len > 0) else {
            return false;
        };
        let sep = if k + 1 == spans.len() { b']' } else { b',' };
        let at_end = |i: u64| usize::try_from(i).ok().and_then(|i| list.get(i).copied());
        if at_end(end - 1) != Some(b'}') || at_end(end) != Some(sep) {
            return false;
        }
        next = end + 1;
    }
    let whole = if spans.is_empty() { 2 } else { next };
    whole == list.len() as u64 && list.last() == Some(&b']')
}

/// Whether `json` starts as the encoding of a node whose id is `id` (its first field).
fn names(json: &[u8], id: &Id) -> bool {
    json.strip_prefix(b"{\"id\":\"").is_some_and(|rest| {
        rest.get(32) == Some(&b'"') && rest.get(..32).and_then(Id::from_hex) == Some(*id)
    })
}

/// Every live node of `layered` (read from `paged`) in creation order, for a snapshot
/// writer: a node the snapshot holds and nothing changed since is given as its bytes there,
/// not decoded and encoded again. Only when the snapshot's bytes read as its writer puts
/// them (every page of the nodes' list passes its checksum, the index's entries tile the
/// list, and each node copied starts with the id its entry names); `false`, with nothing
/// given to `f`, otherwise: the caller then writes every node from its value.
pub fn pieces(
    paged: &Paged,
    layered: &Layered,
    f: &mut dyn FnMut(Piece<'_>) -> std::io::Result<()>,
) -> std::io::Result<bool> {
    let Some((list, spans)) = paged.list_and_spans() else {
        return Ok(false);
    };
    // In range once the spans tile the list.
    let json = |at: u64, len: u64| &list[at as usize..(at + len) as usize];
    let changed = |id: &Id| layered.change_of(id).is_some();
    if !tiles(&list, &spans)
        || !spans
            .iter()
            .all(|&(id, at, len)| changed(&id) || names(json(at, len), &id))
    {
        return Ok(false);
    }
    for (id, at, len) in spans {
        match layered.change_of(&id) {
            Some(None) => continue,
            Some(Some(later)) => f(Piece::Node(later))?,
            None => f(Piece::Bytes {
                id,
                json: json(at, len),
            })?,
        }
    }
    for n in layered.added() {
        f(Piece::Node(n))?;
    }
    Ok(true)
}
