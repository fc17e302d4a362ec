//! A grant's seal: an HMAC-SHA256 over every field of the row, made by `permit grant` with a
//! key only metagate reads (kept in its state folder, which `run`'s boundary hides). A row
//! the agent wrote into the store itself carries no valid seal and is not a grant. Revoking
//! clears the seal: a revoked row whose `revoked_at` is cleared again does not come back to
//! life. Pure: the key is passed in.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::{Grant, ScopeEntry};

/// The key grants are sealed with: 32 random bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct GrantKey([u8; 32]);

impl std::fmt::Debug for GrantKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GrantKey(…)")
    }
}

/// How long a key is, in bytes.
pub const KEY_BYTES: usize = 32;

impl GrantKey {
    /// A key from its bytes (the caller draws them from the OS, or reads its key file).
    pub const fn from_bytes(bytes: [u8; KEY_BYTES]) -> GrantKey {
        GrantKey(bytes)
    }

    /// A key read back from its file, which must hold exactly [`KEY_BYTES`] bytes.
    pub fn from_slice(bytes: &[u8]) -> Option<GrantKey> {
        bytes.try_into().ok().map(GrantKey)
    }

    /// The key's bytes, to be written to its file.
    pub fn as_bytes(&self) -> &[u8; KEY_BYTES] {
        &self.0
    }
}

/// Why a row is not a grant, as `permit list` and a refusal say it.
pub const NOT_SEALED: &str =
    "it carries no valid seal (MAC): metagate permit did not make it, so it is not a grant";

fn mac(g: &Grant, key: &GrantKey) -> Hmac<Sha256> {
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(&key.0).expect("HMAC takes any key");
    // Each field with its length (and whether it is there): no two rows read alike.
    let mut field = |value: Option<&[u8]>| match value {
        None => m.update(&[0]),
        Some(v) => {
            m.update(&[1]);
            m.update(&(v.len() as u64).to_le_bytes());
            m.update(v);
        }
    };
    field(Some(b"metagate grant v1"));
    field(Some(g.id.as_str().as_bytes()));
    field(Some(g.capability.as_bytes()));
    let scope: Vec<String> = g.scope.iter().map(ScopeEntry::to_stored).collect();
    field(Some(scope.join("\n").as_bytes()));
    field(g.session.as_deref().map(str::as_bytes));
    field(Some(&g.granted_at_ms.to_le_bytes()));
    field(Some(&g.expires_at_ms.to_le_bytes()));
    field(g.granted_by.as_deref().map(str::as_bytes));
    field(g.reason.as_deref().map(str::as_bytes));
    m
}

/// The seal of `g` under `key`, as stored (64 hex digits).
pub fn seal(g: &Grant, key: &GrantKey) -> String {
    let bytes = mac(g, key).finalize().into_bytes();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `g` carries a valid seal under `key`: it is not revoked (revoking clears the seal)
/// and its stored seal is the one its fields make. Compared in constant time.
pub fn verify(g: &Grant, key: &GrantKey) -> bool {
    let Some(stored) = g.mac.as_deref() else {
        return false;
    };
    if g.revoked_at_ms.is_some() || stored.len() != 64 {
        return false;
    }
    let mut bytes = [0u8; 32];
    for (i, b) in bytes.iter_mut().enumerate() {
        match u8::from_str_radix(&stored[2 * i..2 * i + 2], 16) {
            Ok(v) => *b = v,
            Err(_) => return false,
        }
    }
    mac(g, key).verify_slice(&bytes).is_ok()
}

/// Marks the rows that are not grants: every row not revoked without a valid seal under
/// `key` (none: no key, so no row is a grant). Such a row covers nothing, and shows as
/// forged.
pub fn mark_forged(grants: &mut [Grant], key: Option<&GrantKey>) {
    for g in grants {
        if g.revoked_at_ms.is_none() && !key.is_some_and(|k| verify(g, k)) {
            g.forged = true;
            g.unreadable = Some(NOT_SEALED.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grants::GrantId;

    fn grant() -> Grant {
        Grant {
            id: GrantId::from_bytes([7; 16]),
            capability: "system_execute".into(),
            scope: vec![ScopeEntry::Path("/w".into())],
            unreadable: None,
            session: Some("s".into()),
            granted_at_ms: 1,
            expires_at_ms: 2,
            revoked_at_ms: None,
            granted_by: Some("op".into()),
            reason: None,
            mac: None,
            forged: false,
        }
    }

    #[test]
    fn a_sealed_grant_verifies_and_any_change_breaks_it() {
        let key = GrantKey::from_bytes([1; 32]);
        let mut g = grant();
        g.mac = Some(seal(&g, &key));
        assert!(verify(&g, &key));
        assert!(!verify(&g, &GrantKey::from_bytes([2; 32])));
        let changes: [fn(&mut Grant); 7] = [
            |g| g.expires_at_ms += 1,
            |g| g.capability.push('x'),
            |g| g.scope.clear(),
            |g| g.session = None,
            |g| g.reason = Some(String::new()),
            |g| g.revoked_at_ms = Some(5),
            |g| g.mac = Some("0".repeat(64)),
        ];
        for change in changes {
            let mut forged = g.clone();
            change(&mut forged);
            assert!(!verify(&forged, &key), "{forged:?}");
        }
    }

    #[test]
    fn rows_without_a_valid_seal_are_marked() {
        let key = GrantKey::from_bytes([1; 32]);
        let mut sealed = grant();
        sealed.mac = Some(seal(&sealed, &key));
        let mut rows = vec![sealed.clone(), grant()];
        mark_forged(&mut rows, Some(&key));
        assert!(!rows[0].forged && rows[1].forged);
        let mut rows = vec![sealed];
        mark_forged(&mut rows, None);
        assert!(rows[0].forged);
    }
}
