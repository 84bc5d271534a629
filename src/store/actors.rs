//! The actors' names the store keeps: an actor first used as `name:NAME` keeps NAME (its id
//! is unchanged: it is the name's), and `actor add` keeps one with a note. The doors show
//! the name where they show an actor ([`Names`]).

use super::Store;
use crate::error::Result;
use crate::id::Actor;
use crate::model::ActorName;
use crate::view::Names;

/// The longest note an actor keeps, in bytes.
pub const NOTE_BYTES: usize = 4096;

/// NAME of `NAME` or `name:NAME`.
fn bare(name: &str) -> &str {
    name.strip_prefix("name:").unwrap_or(name)
}

impl Store {
    /// The names kept, in the order first kept (`actor list`).
    pub fn actor_names(&self) -> Result<Vec<ActorName>> {
        self.backend.actor_names()
    }

    /// The names kept, by actor, to show beside their ids.
    pub fn names(&self) -> Result<Names> {
        Ok(Names::of(&self.backend.actor_names()?))
    }

    /// Keeps `name` for its actor, with `note` when given (replacing the one kept); answers
    /// the entry as kept (`actor add`).
    pub fn add_actor(&self, name: &str, note: Option<&str>) -> Result<ActorName> {
        let id = Actor::from_name_arg(name)?;
        if let Some(n) = note {
            crate::rules::check_text("note", n, NOTE_BYTES)?;
        }
        let entry = ActorName {
            id,
            name: bare(name).to_string(),
            note: note.map(str::to_string),
            added_at: self.now()?,
        };
        self.backend
            .keep_actor_names(std::slice::from_ref(&entry))?;
        self.remember(id);
        let kept = self.backend.actor_names()?;
        Ok(kept.into_iter().find(|a| a.id == id).unwrap_or(entry))
    }

    /// The actor `name` stands for, its name kept: what the first use of `name:NAME` does.
    /// A handle asks its backend once per name.
    pub fn named_actor(&self, name: &str) -> Result<Actor> {
        let id = Actor::from_name_arg(name)?;
        if self.known(id) {
            return Ok(id);
        }
        let entry = ActorName {
            id,
            name: bare(name).to_string(),
            note: None,
            added_at: self.now()?,
        };
        self.backend.keep_actor_names(&[entry])?;
        self.remember(id);
        Ok(id)
    }

    fn known(&self, id: Actor) -> bool {
        self.named.lock().is_ok_and(|k| k.contains(&id))
    }

    fn remember(&self, id: Actor) {
        if let Ok(mut k) = self.named.lock() {
            k.insert(id);
        }
    }
}
