//! [`Patch`] → canonical envelope text. (Being written; see the parser task.)

use super::ast::Patch;

impl Patch<'_> {
    /// The canonical envelope text of this patch.
    pub fn render(&self) -> String {
        String::new()
    }
}
