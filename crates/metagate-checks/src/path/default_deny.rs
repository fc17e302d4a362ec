//! The deny globs that apply when the policy names none.

/// The default deny globs: files a code-reading agent should never open by default.
///
/// Globs without a `/` match a file (or directory) name at any depth; matching is
/// case-insensitive; a match on a directory also denies everything under it. The first glob
/// that matches is the one reported.
///
/// * `.env*` — dotenv files hold API keys and database passwords, under every name tools and
///   people give them: `.env.local`, `.env-local`, `.env_prod`, `.env2`, the editor backup
///   `.env~`, and direnv's `.envrc` (which `export`s secrets into the shell). Also
///   `.env.example`: templates are sometimes filled in, and globs cannot express exceptions;
///   drop it from your list if needed.
/// * `**/.git/**/config` — remote URLs may embed access tokens (`https://user:token@…`), in
///   the repository's `.git/config` and in its submodules' `.git/modules/*/config` alike.
/// * `.git-credentials` — git's plaintext credential store.
/// * `**/secret/**`, `**/secrets/**` — anything in a folder named `secret`/`secrets`, and the
///   folder itself (listing it leaks file names). Only whole components: `secretary.md` and
///   `secret_santa.rs` pass.
/// * `secrets.{json,yaml,yml,toml,env,ini,txt}` — Rails/Streamlit/Kubernetes-style secrets
///   files (but not `secrets.rs`/`secrets.py` source modules).
/// * `client_secret*.json` — Google OAuth client secrets.
/// * `*.pem`, `*.key`, `*.p12`, `*.pfx`, `*.jks`, `*.keystore`, `*.ppk`, `*.p8` — private
///   keys and key stores, PuTTY's and PKCS#8's (Apple's `AuthKey_….p8`) among them (`*.pem`
///   also catches public certificates: conservative).
/// * `id_rsa*`, `id_dsa*`, `id_ecdsa*`, `id_ed25519*`, `**/.ssh/identity` — SSH private keys
///   (`identity` is SSH 1's default name, still read by `ssh -i`). This also denies the
///   `.pub` halves: they are harmless but useless to a code-reading agent, and excluding them
///   would need negation, which a deny list does not have. Other `*.pub` files pass.
/// * `*private*key`, `*private*keys`, `*private*key*.{txt,json,yaml,yml,toml,ini,cfg,conf,env,asc,gpg,der,b64,base64}`
///   — `private_key`, `private_keys/`, `private_key.json`, `my-private-key.txt`,
///   `privatekey.asc` (`private_key.pem` is `*.pem`'s).
/// * `*passwords` — password lists and folders of them (`passwords`, `passwords/`).
/// * `*password*.{txt,csv,json,yaml,yml,toml,ini,cfg,conf,env}` — password files in data
///   formats, `passwords.txt` among them.
///
/// The last three are restricted to bare names and data or key formats on purpose: plain
/// `*private*key*` or `*password*` would deny source such as `private_key.rs`,
/// `PrivateKeyParser.java`, `passwords.rs` or `test_passwords.py`, which an agent reading
/// code needs.
/// * `*.kdbx` — KeePass databases.
/// * `.htpasswd` — web server password hashes.
/// * `.netrc`, `_netrc` — login/password per host (curl, ftp, git over https).
/// * `.pgpass` — PostgreSQL passwords.
/// * `credentials.json` — cloud SDK/service-account credentials.
/// * `**/.aws/credentials` — AWS access keys.
/// * `.npmrc`, `.pypirc` — registry tokens (npm's `_authToken`, PyPI's upload passwords).
/// * `**/.docker/config.json` — registry logins (`auths`, base64 `user:password`).
/// * `**/.kube/config` — cluster credentials (client keys, bearer tokens).
/// * `.vault-token` — HashiCorp Vault's token.
/// * `terraform.tfstate`, `terraform.tfstate.backup` — Terraform state, which holds every
///   secret the resources were made with, in plain text.
pub const DEFAULT_DENY: &[&str] = &[
    ".env*",
    "**/.git/**/config",
    ".git-credentials",
    "**/secret/**",
    "**/secrets/**",
    "secrets.{json,yaml,yml,toml,env,ini,txt}",
    "client_secret*.json",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.ppk",
    "*.p8",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "**/.ssh/identity",
    "*private*key",
    "*private*keys",
    "*private*key*.{txt,json,yaml,yml,toml,ini,cfg,conf,env,asc,gpg,der,b64,base64}",
    "*passwords",
    "*password*.{txt,csv,json,yaml,yml,toml,ini,cfg,conf,env}",
    "*.kdbx",
    ".htpasswd",
    ".netrc",
    "_netrc",
    ".pgpass",
    "credentials.json",
    "**/.aws/credentials",
    ".npmrc",
    ".pypirc",
    "**/.docker/config.json",
    "**/.kube/config",
    ".vault-token",
    "terraform.tfstate",
    "terraform.tfstate.backup",
];
