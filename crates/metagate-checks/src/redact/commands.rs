//! Passwords that known commands take as options of their own: `mysql -pX`, `sshpass -p X`,
//! `docker login -p X`, `redis-cli -a X`, `zip -P X`, `ldapsearch -w X`, `smbclient -U user%X`,
//! `openssl … -passin pass:X`, `sqlplus user/X@db`.
//!
//! Letters such as `-p` mean a port or `--parents` to most commands, so an option counts only
//! after one of the commands that reads it as a password, in the same simple command: since the
//! last `; & | ( ) \n` or backtick. Quotes do not end a command, so `bash -c "mysql -pX"`,
//! `ssh host 'mysql -pX'` and `docker exec db mysql -pX` are all read.

use super::REDACTED_B;
use super::bytes::scan_while;
use super::key_values::{is_placeholder, quoted_end};

/// Which part of an option's value is the secret.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum SecretPart {
    Whole,
    /// `user%password` (Samba).
    AfterPercent,
    /// `user:password` (curl, skopeo); an all-digit part is a uid:gid, not a password.
    AfterColon,
    /// `user,password` (lftp).
    AfterComma,
    /// `pass:password` (OpenSSL); `env:`, `file:`, `fd:` and `stdin` name where it is.
    AfterPassPrefix,
    /// `user/password@database` (Oracle tools).
    AfterSlash,
}

/// How an option takes its value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Takes {
    /// In the same word: `-pX`, `--user=X`, `/p:X`.
    Attached,
    /// In the next word: `-pw X`.
    Separate,
    Either,
}

struct PasswordOption {
    spelling: &'static [u8],
    takes: Takes,
    part: SecretPart,
    /// Only after a `login` word: `docker login -p X`, but `docker run -p 8080:80`.
    after_login: bool,
}

const fn option(spelling: &'static [u8], takes: Takes, part: SecretPart) -> PasswordOption {
    PasswordOption {
        spelling,
        takes,
        part,
        after_login: false,
    }
}

const fn login_option(spelling: &'static [u8]) -> PasswordOption {
    PasswordOption {
        spelling,
        takes: Takes::Either,
        part: SecretPart::Whole,
        after_login: true,
    }
}

/// Commands grouped by the options they read as passwords. Each is one bit of a set.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Family {
    MySql,
    MyCli,
    SshPass,
    ContainerLogin,
    Skopeo,
    AzureCli,
    Redis,
    Zip,
    SevenZip,
    Ldap,
    LdapPasswd,
    Samba,
    Mongo,
    SqlServer,
    Putty,
    KeyTool,
    OpenSsl,
    SshKeygen,
    Rdesktop,
    FreeRdp,
    Curl,
    Lftp,
    Snmp,
    Oracle,
}

/// Every command word and its family.
const COMMANDS: &[(&[u8], Family)] = &[
    (b"mysql", Family::MySql),
    (b"mysqldump", Family::MySql),
    (b"mysqladmin", Family::MySql),
    (b"mysqlimport", Family::MySql),
    (b"mysqlcheck", Family::MySql),
    (b"mysqlshow", Family::MySql),
    (b"mysqlslap", Family::MySql),
    (b"mysqlpump", Family::MySql),
    (b"mysqlbinlog", Family::MySql),
    (b"mysqlsh", Family::MySql),
    (b"mariadb", Family::MySql),
    (b"mariadb-dump", Family::MySql),
    (b"mariadb-admin", Family::MySql),
    (b"mariadb-import", Family::MySql),
    (b"mariadb-check", Family::MySql),
    (b"mariadb-show", Family::MySql),
    (b"mariadb-slap", Family::MySql),
    (b"mariadb-binlog", Family::MySql),
    (b"mycli", Family::MyCli),
    (b"sshpass", Family::SshPass),
    (b"docker", Family::ContainerLogin),
    (b"podman", Family::ContainerLogin),
    (b"nerdctl", Family::ContainerLogin),
    (b"buildah", Family::ContainerLogin),
    (b"oras", Family::ContainerLogin),
    (b"helm", Family::ContainerLogin),
    (b"finch", Family::ContainerLogin),
    (b"crane", Family::ContainerLogin),
    (b"regctl", Family::ContainerLogin),
    (b"skopeo", Family::Skopeo),
    (b"az", Family::AzureCli),
    (b"redis-cli", Family::Redis),
    (b"keydb-cli", Family::Redis),
    (b"valkey-cli", Family::Redis),
    (b"zip", Family::Zip),
    (b"unzip", Family::Zip),
    (b"zipcloak", Family::Zip),
    (b"funzip", Family::Zip),
    (b"7z", Family::SevenZip),
    (b"7za", Family::SevenZip),
    (b"7zr", Family::SevenZip),
    (b"7zz", Family::SevenZip),
    (b"rar", Family::SevenZip),
    (b"unrar", Family::SevenZip),
    (b"ldapsearch", Family::Ldap),
    (b"ldapmodify", Family::Ldap),
    (b"ldapadd", Family::Ldap),
    (b"ldapdelete", Family::Ldap),
    (b"ldapmodrdn", Family::Ldap),
    (b"ldapcompare", Family::Ldap),
    (b"ldapwhoami", Family::Ldap),
    (b"ldapexop", Family::Ldap),
    (b"ldapvc", Family::Ldap),
    (b"ldappasswd", Family::LdapPasswd),
    (b"smbclient", Family::Samba),
    (b"rpcclient", Family::Samba),
    (b"smbcacls", Family::Samba),
    (b"smbget", Family::Samba),
    (b"smbcquotas", Family::Samba),
    (b"smbtree", Family::Samba),
    (b"net", Family::Samba),
    (b"samba-tool", Family::Samba),
    (b"winexe", Family::Samba),
    (b"mongo", Family::Mongo),
    (b"mongosh", Family::Mongo),
    (b"mongodump", Family::Mongo),
    (b"mongorestore", Family::Mongo),
    (b"mongoexport", Family::Mongo),
    (b"mongoimport", Family::Mongo),
    (b"mongostat", Family::Mongo),
    (b"mongotop", Family::Mongo),
    (b"mongofiles", Family::Mongo),
    (b"sqlcmd", Family::SqlServer),
    (b"bcp", Family::SqlServer),
    (b"osql", Family::SqlServer),
    (b"plink", Family::Putty),
    (b"pscp", Family::Putty),
    (b"psftp", Family::Putty),
    (b"putty", Family::Putty),
    (b"keytool", Family::KeyTool),
    (b"jarsigner", Family::KeyTool),
    (b"openssl", Family::OpenSsl),
    (b"ssh-keygen", Family::SshKeygen),
    (b"rdesktop", Family::Rdesktop),
    (b"xfreerdp", Family::FreeRdp),
    (b"xfreerdp3", Family::FreeRdp),
    (b"wlfreerdp", Family::FreeRdp),
    (b"sdl-freerdp", Family::FreeRdp),
    (b"curl", Family::Curl),
    (b"lftp", Family::Lftp),
    (b"snmpwalk", Family::Snmp),
    (b"snmpget", Family::Snmp),
    (b"snmpset", Family::Snmp),
    (b"snmpbulkwalk", Family::Snmp),
    (b"snmpbulkget", Family::Snmp),
    (b"snmpgetnext", Family::Snmp),
    (b"snmptrap", Family::Snmp),
    (b"snmptable", Family::Snmp),
    (b"snmpdelta", Family::Snmp),
    (b"snmpdf", Family::Snmp),
    (b"snmpstatus", Family::Snmp),
    (b"sqlplus", Family::Oracle),
    (b"sqlldr", Family::Oracle),
    (b"expdp", Family::Oracle),
    (b"impdp", Family::Oracle),
    (b"rman", Family::Oracle),
    (b"exp", Family::Oracle),
    (b"imp", Family::Oracle),
];

/// The longest name in [`COMMANDS`].
const MAX_COMMAND_LEN: usize = 14;

/// A one-sided filter over [`COMMANDS`] by length and first and last letter (any case): every
/// word of every text is looked up, and almost none is a command.
struct CommandHints([u64; 32]);

impl CommandHints {
    const fn slot(name: &[u8]) -> usize {
        let n = name.len();
        let first = name[0].to_ascii_lowercase() as usize;
        let last = name[n - 1].to_ascii_lowercase() as usize;
        (n * 131 + first * 31 + last * 7) % (32 * 64)
    }

    const fn new() -> Self {
        let mut bits = [0u64; 32];
        let mut i = 0;
        while i < COMMANDS.len() {
            let name = COMMANDS[i].0;
            assert!(name.len() >= 2 && name.len() <= MAX_COMMAND_LEN);
            let slot = Self::slot(name);
            bits[slot / 64] |= 1 << (slot % 64);
            i += 1;
        }
        CommandHints(bits)
    }

    fn may_hold(&self, name: &[u8]) -> bool {
        if !(2..=MAX_COMMAND_LEN).contains(&name.len()) {
            return false;
        }
        let slot = Self::slot(name);
        self.0[slot / 64] & (1 << (slot % 64)) != 0
    }
}

static COMMAND_HINTS: CommandHints = CommandHints::new();

const ALL_FAMILIES: [Family; 24] = [
    Family::MySql,
    Family::MyCli,
    Family::SshPass,
    Family::ContainerLogin,
    Family::Skopeo,
    Family::AzureCli,
    Family::Redis,
    Family::Zip,
    Family::SevenZip,
    Family::Ldap,
    Family::LdapPasswd,
    Family::Samba,
    Family::Mongo,
    Family::SqlServer,
    Family::Putty,
    Family::KeyTool,
    Family::OpenSsl,
    Family::SshKeygen,
    Family::Rdesktop,
    Family::FreeRdp,
    Family::Curl,
    Family::Lftp,
    Family::Snmp,
    Family::Oracle,
];

impl Family {
    fn bit(self) -> u32 {
        1 << self as u32
    }

    /// The family of a command word: its file name, any case, without `.exe`.
    fn of(word: &[u8]) -> Option<Family> {
        // Words are short: a plain loop beats a vectorized search here.
        let start = word.iter().rposition(|&c| c == b'/' || c == b'\\');
        let name = &word[start.map_or(0, |p| p + 1)..];
        let name = match name.len().checked_sub(4) {
            Some(stem) if name[stem..].eq_ignore_ascii_case(b".exe") => &name[..stem],
            _ => name,
        };
        if !COMMAND_HINTS.may_hold(name) {
            return None;
        }
        let mut lower = [0u8; MAX_COMMAND_LEN];
        let lower = &mut lower[..name.len()];
        lower.copy_from_slice(name);
        lower.make_ascii_lowercase();
        COMMANDS
            .iter()
            .find(|(command, _)| *command == &*lower)
            .map(|&(_, family)| family)
    }

    fn options(self) -> &'static [PasswordOption] {
        use SecretPart::{AfterColon, AfterComma, AfterPassPrefix, AfterPercent, Whole};
        use Takes::{Attached, Either, Separate};
        match self {
            // `mysql -p X` prompts for the password and opens database X.
            Family::MySql | Family::SevenZip => const { &[option(b"-p", Attached, Whole)] },
            Family::MyCli | Family::SshPass | Family::Mongo | Family::Rdesktop => {
                const { &[option(b"-p", Either, Whole)] }
            }
            Family::ContainerLogin | Family::AzureCli => const { &[login_option(b"-p")] },
            Family::Skopeo => {
                const {
                    &[
                        option(b"--creds", Either, AfterColon),
                        option(b"--src-creds", Either, AfterColon),
                        option(b"--dest-creds", Either, AfterColon),
                        login_option(b"-p"),
                    ]
                }
            }
            Family::Redis => const { &[option(b"-a", Either, Whole)] },
            Family::Zip => const { &[option(b"-P", Either, Whole)] },
            Family::Ldap => const { &[option(b"-w", Either, Whole)] },
            Family::LdapPasswd => {
                const {
                    &[
                        option(b"-w", Either, Whole),
                        option(b"-s", Either, Whole),
                        option(b"-a", Either, Whole),
                    ]
                }
            }
            Family::Samba => {
                const {
                    &[
                        option(b"-U", Either, AfterPercent),
                        option(b"--user", Either, AfterPercent),
                        option(b"--username", Either, AfterPercent),
                    ]
                }
            }
            Family::SqlServer => const { &[option(b"-P", Either, Whole)] },
            Family::Putty => const { &[option(b"-pw", Separate, Whole)] },
            Family::KeyTool => {
                const {
                    &[
                        option(b"-storepass", Separate, Whole),
                        option(b"-keypass", Separate, Whole),
                        option(b"-srcstorepass", Separate, Whole),
                        option(b"-deststorepass", Separate, Whole),
                        option(b"-srckeypass", Separate, Whole),
                        option(b"-destkeypass", Separate, Whole),
                    ]
                }
            }
            Family::OpenSsl => {
                const {
                    &[
                        option(b"-pass", Separate, AfterPassPrefix),
                        option(b"-passin", Separate, AfterPassPrefix),
                        option(b"-passout", Separate, AfterPassPrefix),
                        option(b"-k", Separate, Whole),
                        option(b"-K", Separate, Whole),
                    ]
                }
            }
            Family::SshKeygen => {
                const { &[option(b"-N", Either, Whole), option(b"-P", Either, Whole)] }
            }
            Family::FreeRdp => const { &[option(b"/p:", Attached, Whole)] },
            Family::Curl => {
                const {
                    &[
                        option(b"-u", Either, AfterColon),
                        option(b"-U", Either, AfterColon),
                        option(b"--proxy-user", Either, AfterColon),
                    ]
                }
            }
            Family::Lftp => const { &[option(b"-u", Either, AfterComma)] },
            Family::Snmp => {
                const {
                    &[
                        option(b"-A", Either, Whole),
                        option(b"-X", Either, Whole),
                        option(b"-c", Either, Whole),
                    ]
                }
            }
            Family::Oracle => &[],
        }
    }
}

/// Whether `word` is a command whose options may hold a password.
pub(super) fn names_command(word: &[u8]) -> bool {
    Family::of(word).is_some()
}

/// Ends a simple command.
fn is_command_end(c: u8) -> bool {
    matches!(c, b';' | b'&' | b'|' | b'(' | b')' | b'\n' | b'\r' | b'`')
}

fn is_quote(c: u8) -> bool {
    matches!(c, b'"' | b'\'')
}

/// Pushes the password spans of known commands' options in `b`.
pub(super) fn scan_commands(b: &[u8], out: &mut Vec<(usize, usize)>) {
    let n = b.len();
    // Families whose command was seen in the current simple command.
    let mut active = 0u32;
    let mut login = false;
    let mut i = 0;
    while i < n {
        let c = b[i];
        if is_command_end(c) {
            active = 0;
            login = false;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() || is_quote(c) {
            i += 1;
            continue;
        }
        let start = i;
        let end = scan_while(b, i, |c| {
            !(c.is_ascii_whitespace() || is_quote(c) || is_command_end(c))
        });
        i = end;
        let word = &b[start..end];
        if active != 0
            && let Some(span) = password_of_word(b, start, end, active, login)
        {
            out.push(span);
            i = i.max(span.1);
            continue;
        }
        if let Some(family) = Family::of(word) {
            active |= family.bit();
        } else if word == b"login" {
            login = true;
        }
    }
}

/// The password span that the word `b[start..end]` starts, if it is a password option of an
/// active family (or, for Oracle tools, a `user/password@db` argument).
fn password_of_word(
    b: &[u8],
    start: usize,
    end: usize,
    active: u32,
    login: bool,
) -> Option<(usize, usize)> {
    let word = &b[start..end];
    let families = ALL_FAMILIES.iter().filter(|f| active & f.bit() != 0);
    if word[0] != b'-' && word[0] != b'/' {
        if active & Family::Oracle.bit() != 0 && word[0] != b'@' && !word.contains(&b'=') {
            let (vs, ve) = value_at(b, start)?;
            return secret_part(b, vs, ve, SecretPart::AfterSlash);
        }
        return None;
    }
    for family in families {
        for opt in family.options() {
            if (opt.after_login && !login) || !word.starts_with(opt.spelling) {
                continue;
            }
            let rest = start + opt.spelling.len();
            let long = opt.spelling.starts_with(b"--");
            let value = if rest == end {
                match b.get(end) {
                    // `-p'secret'`: attached, quoted.
                    Some(&q) if is_quote(q) && opt.takes != Takes::Separate && !long => {
                        value_at(b, end)
                    }
                    Some(b' ' | b'\t') if opt.takes != Takes::Attached => {
                        let k = scan_while(b, end, |c| c == b' ' || c == b'\t');
                        if k >= b.len() || b[k] == b'-' || is_command_end(b[k]) {
                            None
                        } else {
                            value_at(b, k)
                        }
                    }
                    _ => None,
                }
            } else if opt.takes == Takes::Separate {
                None
            } else if long {
                // `--user=alice%pw`; `--username-file` is another option.
                (b[rest] == b'=').then(|| value_at(b, rest + 1)).flatten()
            } else {
                value_at(b, rest)
            };
            if let Some((vs, ve)) = value {
                return secret_part(b, vs, ve, opt.part);
            }
        }
    }
    None
}

/// The value starting at `k`: quoted (to its closing quote) or the rest of the word, `&`
/// included.
fn value_at(b: &[u8], k: usize) -> Option<(usize, usize)> {
    match b.get(k) {
        None => None,
        Some(&q) if is_quote(q) => Some((k + 1, quoted_end(b, k + 1, q, false))),
        Some(_) => {
            let mut end = scan_while(b, k, |c| {
                !(c.is_ascii_whitespace() || is_quote(c) || matches!(c, b';' | b'|' | b'`'))
            });
            // `\"` of a command quoted inside JSON text.
            if end > k && b[end - 1] == b'\\' && b.get(end).copied().is_some_and(is_quote) {
                end -= 1;
            }
            Some((k, end))
        }
    }
}

fn secret_part(b: &[u8], vs: usize, ve: usize, part: SecretPart) -> Option<(usize, usize)> {
    let value = &b[vs..ve];
    let after = |sep: u8| {
        value
            .iter()
            .position(|&c| c == sep)
            .map(|p| (vs + p + 1, ve))
    };
    let (start, end) = match part {
        SecretPart::Whole => (vs, ve),
        SecretPart::AfterPercent => after(b'%')?,
        SecretPart::AfterColon => after(b':')?,
        SecretPart::AfterComma => after(b',')?,
        SecretPart::AfterPassPrefix => (value.starts_with(b"pass:").then_some(vs + 5)?, ve),
        SecretPart::AfterSlash => {
            let slash = value.iter().position(|&c| c == b'/').filter(|&p| p > 0)?;
            let at = value
                .iter()
                .rposition(|&c| c == b'@')
                .filter(|&p| p > slash);
            (vs + slash + 1, at.map_or(ve, |p| vs + p))
        }
    };
    let secret = &b[start..end];
    let uid_gid = part == SecretPart::AfterColon && secret.iter().all(u8::is_ascii_digit);
    if secret.is_empty() || uid_gid || secret.starts_with(REDACTED_B) || is_placeholder(secret) {
        return None;
    }
    Some((start, end))
}

/// The password spans in an argv-style array of words (`["mysql", "-uroot", "-pX"]`), as
/// `(item, start, end)`: the same options as in text, each item one word.
pub(super) fn argv_password_spans(items: &[&str]) -> Vec<(usize, usize, usize)> {
    let mut spans = Vec::new();
    let mut active = 0u32;
    let mut login = false;
    for (index, item) in items.iter().enumerate() {
        let word = item.as_bytes();
        if word.is_empty() {
            continue;
        }
        if active != 0
            && let Some(span) = argv_password_of_word(items, index, active, login)
        {
            spans.push(span);
            continue;
        }
        if let Some(family) = Family::of(word) {
            active |= family.bit();
        } else if word == b"login" {
            login = true;
        }
    }
    spans
}

fn argv_password_of_word(
    items: &[&str],
    index: usize,
    active: u32,
    login: bool,
) -> Option<(usize, usize, usize)> {
    let word = items[index].as_bytes();
    if word[0] != b'-' && word[0] != b'/' {
        if active & Family::Oracle.bit() != 0 && word[0] != b'@' && !word.contains(&b'=') {
            let (start, end) = secret_part(word, 0, word.len(), SecretPart::AfterSlash)?;
            return Some((index, start, end));
        }
        return None;
    }
    let families = ALL_FAMILIES.iter().filter(|f| active & f.bit() != 0);
    for family in families {
        for opt in family.options() {
            if (opt.after_login && !login) || !word.starts_with(opt.spelling) {
                continue;
            }
            let rest = opt.spelling.len();
            let long = opt.spelling.starts_with(b"--");
            if rest == word.len() {
                let next = items.get(index + 1).map(|s| s.as_bytes());
                if opt.takes != Takes::Attached
                    && let Some(next) = next.filter(|n| !n.is_empty() && n[0] != b'-')
                {
                    let (start, end) = secret_part(next, 0, next.len(), opt.part)?;
                    return Some((index + 1, start, end));
                }
            } else if opt.takes != Takes::Separate && (!long || word[rest] == b'=') {
                let from = if long { rest + 1 } else { rest };
                let (start, end) = secret_part(word, from, word.len(), opt.part)?;
                return Some((index, start, end));
            }
        }
    }
    None
}
