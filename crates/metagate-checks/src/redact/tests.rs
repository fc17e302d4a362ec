use super::key_names::{KeyKind, classify_key};
use super::*;
use proptest::prelude::*;
use serde_json::json;

const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
const PEM_BODY: &str = "MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB";

fn is_secret_key(key: &str) -> bool {
    classify_key(key.as_bytes()) != KeyKind::Plain
}

fn pem() -> String {
    format!(
        "-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\naFDrBz9vFqU4yE3Tz+9nOq1D0wXbKCP6rHq0yE1JZ8k3XfhRSMkGJ0mX7yLtTq2\n-----END RSA PRIVATE KEY-----"
    )
}

/// (description, value, secret that must disappear)
fn secret_corpus() -> Vec<(&'static str, Value, String)> {
    let s = |x: &str| x.to_string();
    vec![
        (
            "top-level password",
            json!({"password": "hunter2"}),
            s("hunter2"),
        ),
        ("api_key", json!({"api_key": "abc123xyz"}), s("abc123xyz")),
        (
            "apiKey number",
            json!({"apiKey": 918273645}),
            s("918273645"),
        ),
        ("API-KEY", json!({"API-KEY": "k-9f8e7d6c"}), s("k-9f8e7d6c")),
        (
            "Api.Key",
            json!({"Api.Key": "zz-top-secret"}),
            s("zz-top-secret"),
        ),
        (
            "x-api-key header map",
            json!({"headers": {"x-api-key": "kv_112233"}}),
            s("kv_112233"),
        ),
        (
            "nested in array",
            json!({"items": [{"name": "svc"}, {"name": "x", "client_secret": "cs-77aa88"}]}),
            s("cs-77aa88"),
        ),
        (
            "object under credentials",
            json!({"credentials": {"user": "bob", "pass": "s3cr3tpass"}}),
            s("s3cr3tpass"),
        ),
        (
            "array under secrets",
            json!({"secrets": ["alpha-1", "beta-2"]}),
            s("alpha-1"),
        ),
        (
            "refresh_token",
            json!({"refresh_token": "rt.9a8b7c6d"}),
            s("rt.9a8b7c6d"),
        ),
        (
            "accessToken",
            json!({"auth": {"accessToken": "at_0099"}}),
            s("at_0099"),
        ),
        (
            "x-auth-token",
            json!({"X-Auth-Token": "xat-5544"}),
            s("xat-5544"),
        ),
        (
            "session_id",
            json!({"session_id": "sess-4242"}),
            s("sess-4242"),
        ),
        (
            "Authorization key",
            json!({"Authorization": "Bearer tok_abcdef"}),
            s("tok_abcdef"),
        ),
        (
            "Cookie key",
            json!({"Cookie": "sid=abc123; theme=dark"}),
            s("sid=abc123"),
        ),
        (
            "AWS secret key",
            json!({"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}),
            s("wJalrXUtnFEMI"),
        ),
        (
            "private_key PEM",
            json!({"private_key": pem()}),
            s(PEM_BODY),
        ),
        ("secretValue", json!({"secretValue": "sv-123"}), s("sv-123")),
        (
            "argv flag",
            json!({"argv": ["mysql", "--password", "pw-in-argv"]}),
            s("pw-in-argv"),
        ),
        (
            "bearer in shell command",
            json!({"code": "curl -H \"Authorization: Bearer abc.def\" https://api.example.com/v1"}),
            s("abc.def"),
        ),
        (
            "basic auth header line",
            json!({"text": "Authorization: Basic dXNlcjpwYXNzd29yZA=="}),
            s("dXNlcjpwYXNzd29yZA"),
        ),
        (
            "token scheme",
            json!({"cmd": "curl -H 'Authorization: token gh0_not_a_prefix_99' api"}),
            s("gh0_not_a_prefix_99"),
        ),
        (
            "standalone bearer",
            json!({"cmd": "send header Bearer q9w8e7r6t5y4 to the proxy"}),
            s("q9w8e7r6t5y4"),
        ),
        (
            "JWT in free text",
            json!({"message": format!("my session is {JWT} thanks")}),
            s(JWT),
        ),
        (
            "PEM in multi-line string",
            json!({"content": format!("key file:\n{}\ndone", pem())}),
            s(PEM_BODY),
        ),
        (
            "PEM without END",
            json!({"content": format!("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{PEM_BODY}")}),
            s(PEM_BODY),
        ),
        (
            "sk-proj-",
            json!(["use sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t now"]),
            s("Ab3dEf6hIj9kLm2nOp5qRs8t"),
        ),
        (
            "sk-",
            json!(["sk-4f9Kq2LmX8vB1nZ7pR3sT6wY"]),
            s("4f9Kq2LmX8vB1nZ7pR3sT6wY"),
        ),
        (
            "sk_live_",
            json!(["key sk_live_51Hq8bKLm2ZpQ9rT4vX7y here"]),
            s("51Hq8bKLm2ZpQ9rT4vX7y"),
        ),
        (
            "sk_test_",
            json!(["sk_test_4eC39HqLyjWDarjtT1zdp7dc"]),
            s("4eC39HqLyjWDarjtT1zdp7dc"),
        ),
        (
            "rk_live_",
            json!(["rk_live_9aB8cD7eF6gH5iJ4kL3m"]),
            s("9aB8cD7eF6gH5iJ4kL3m"),
        ),
        (
            "pk_live_",
            json!(["pk_live_1a2B3c4D5e6F7g8H9i0J"]),
            s("1a2B3c4D5e6F7g8H9i0J"),
        ),
        (
            "ghp_",
            json!([
                "git clone https://github.com/x/y && echo ghp_R2d2C3poBb8Ee9Ff0Gg1Hh2Ii3Jj4Kk5Ll6"
            ]),
            s("R2d2C3poBb8Ee9Ff0Gg1Hh2Ii3Jj4Kk5Ll6"),
        ),
        (
            "gho_",
            json!(["gho_16C7e42F292c6912E7710c838347Ae178B4a"]),
            s("16C7e42F292c6912E7710c838347Ae178B4a"),
        ),
        (
            "ghu_",
            json!(["(ghu_aB1cD2eF3gH4iJ5kL6mN7oP8)"]),
            s("aB1cD2eF3gH4iJ5kL6mN7oP8"),
        ),
        (
            "ghs_",
            json!(["\"ghs_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2\""]),
            s("Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2"),
        ),
        (
            "ghr_",
            json!(["ghr_Qq1Ww2Ee3Rr4Tt5Yy6Uu7Ii8"]),
            s("Qq1Ww2Ee3Rr4Tt5Yy6Uu7Ii8"),
        ),
        (
            "github_pat_",
            json!(["github_pat_11ABCDEFG0abcdefghij_KLMNOPqrstuv1234"]),
            s("11ABCDEFG0abcdefghij"),
        ),
        (
            "glpat-",
            json!(["glpat-xY7zW9vU1tS3rQ5pO2nM"]),
            s("xY7zW9vU1tS3rQ5pO2nM"),
        ),
        (
            "xoxb-",
            json!(["slack xoxb-1234567890-0987654321-AbCdEfGhIjKl"]),
            s("1234567890-0987654321"),
        ),
        (
            "xoxp-",
            json!(["xoxp-2222222222-3333333333-abcdEFGH"]),
            s("2222222222-3333333333"),
        ),
        (
            "xoxa-",
            json!(["xoxa-2-4444444444-AbcDefGhiJkl"]),
            s("4444444444-AbcDefGhiJkl"),
        ),
        (
            "xapp-",
            json!(["xapp-1-A0123456789-5555555555-abcDEF"]),
            s("A0123456789-5555555555"),
        ),
        (
            "AKIA",
            json!(["aws_access_key_id AKIAIOSFODNN7EXAMPLE ok"]),
            s("AKIAIOSFODNN7EXAMPLE"),
        ),
        (
            "ASIA",
            json!(["ASIAZ3XK9LMNOPQRST12"]),
            s("ASIAZ3XK9LMNOPQRST12"),
        ),
        (
            "AIza",
            json!(["maps key AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"]),
            s("SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
        ),
        (
            "hf_",
            json!(["hf_AbCdEfGhIjKlMnOpQrStUvWxYz"]),
            s("AbCdEfGhIjKlMnOpQrStUvWxYz"),
        ),
        (
            "npm_",
            json!(["//registry.npmjs.org/:_authToken=npm_Ab12Cd34Ef56Gh78Ij90"]),
            s("Ab12Cd34Ef56Gh78Ij90"),
        ),
        (
            "pypi-",
            json!(["pypi-AgEIcHlwaS5vcmcCJGI4"]),
            s("AgEIcHlwaS5vcmcCJGI4"),
        ),
        (
            "SG.",
            json!(["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"]),
            s("ngeVfQFYQlKU0ufo8x5d1A"),
        ),
        (
            "URL query parameter",
            json!({"url": "https://api.example.com/v1/data?api_key=XYZsecret123&x=1"}),
            s("XYZsecret123"),
        ),
        (
            "URL userinfo",
            json!({"dsn": "postgres://admin:p4ssw0rd!@db.internal:5432/app"}),
            s("p4ssw0rd!"),
        ),
        (
            "env assignment",
            json!({"code": "PASSWORD=hunter2xyz ./run.sh --fast"}),
            s("hunter2xyz"),
        ),
        (
            "export token",
            json!({"code": "export GITHUB_TOKEN=plainvalue42 && git push"}),
            s("plainvalue42"),
        ),
        (
            "JSON-ish inside string",
            json!({"body": "{\"user\": \"bob\", \"password\": \"pa55 word\"}"}),
            s("pa55 word"),
        ),
        (
            "flag with value",
            json!({"code": "mysql --password hunter22 -h db"}),
            s("hunter22"),
        ),
        (
            "curl -u",
            json!({"code": "curl -u admin:s3cretpw https://x.example"}),
            s("s3cretpw"),
        ),
        (
            "cookie header line",
            json!({"raw": "GET / HTTP/1.1\r\nCookie: sessionid=abc; csrftoken=def\r\nHost: x"}),
            s("sessionid=abc"),
        ),
        (
            "YAML config",
            json!({"file": "db:\n  user: app\n  password: Tr0ub4dor&3\n"}),
            s("Tr0ub4dor&3"),
        ),
        (
            "prefix inside a placeholder",
            json!({"tpl": "token: \"{{ ghp_R2d2C3poBb8Ee9Ff0Gg1Hh2Ii3Jj4Kk5Ll6 }}\""}),
            s("R2d2C3poBb8Ee9Ff0Gg1Hh2Ii3Jj4Kk5Ll6"),
        ),
        (
            "YAML PEM value",
            json!({"file": "tls:\n  private_key: -----BEGIN PRIVATE KEY-----\n  MIIBVgIBADAN\n  tail9Kq==\n  -----END PRIVATE KEY-----\n  cert: x\n"}),
            s("tail9Kq"),
        ),
        (
            "high-entropy alone",
            json!({"value": "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oO"}),
            s("u8jzPde0IgxLd6GncfBAepfJBd0Kh8oO"),
        ),
        (
            "high-entropy in sentence",
            json!({"message": "the key is NnFRIBXuDL7DxtpYlSXpfKtHF4vUCsMehGAkWvj7 keep it safe"}),
            s("NnFRIBXuDL7DxtpYlSXpfKtHF4vUCsMehGAkWvj7"),
        ),
        (
            "high-entropy base64",
            json!({"text": "blob WAXwdlornB1+DzfESSG9P2Vk6t9/FCpyZoxH4iPR end"}),
            s("WAXwdlornB1+DzfESSG9P2Vk6t9/FCpyZoxH4iPR"),
        ),
        (
            "high-entropy lower+digits",
            json!(["19r0wyojfljooa5lqsaj08xui6d39zzzzg4zdmen"]),
            s("19r0wyojfljooa5lqsaj08xui6d39zzzzg4zdmen"),
        ),
        (
            "base64 of a PEM",
            json!(["LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVB"]),
            s("LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVB"),
        ),
    ]
}

#[test]
fn secrets_are_redacted() {
    let corpus = secret_corpus();
    assert!(corpus.len() >= 40);
    for (name, mut v, secret) in corpus {
        let n = redact_value(&mut v);
        let out = serde_json::to_string(&v).unwrap();
        assert!(!out.contains(&secret), "{name}: secret survived: {out}");
        assert!(out.contains(REDACTED), "{name}: no marker: {out}");
        assert!(n >= 1, "{name}: count {n}");
    }
}

#[test]
fn non_secrets_are_kept() {
    let corpus = vec![
        json!({"runtime":"terminal","code":"ls -la /tmp && grep -r foo src","session":0,"reset":false}),
        json!({"runtime":"python","code":"import os\nprint(os.listdir('.'))","session":1,"reset":true}),
        json!({"max_tokens": 512, "temperature": 0.2}),
        json!({"tokens": 1200, "token_count": 5, "num_tokens": 7, "maxTokens": 100}),
        json!({"tokenizer": "cl100k_base", "token_type": "Bearer", "next_page_token": "CAESBggDEAEYAQ"}),
        json!({"author": "Jane Doe", "authority": "login.example.com", "oauth": null}),
        json!({"keyboard": "us", "key": "user:42:profile", "monkey": "banana", "secretary": "Ann"}),
        json!({"code": "x = 1", "text": "hello world", "query": "select * from users where name = 'bob'"}),
        json!({"message": "Hello, how are you today? I will send the report tomorrow."}),
        json!({"password": null, "token": "", "is_password": true, "withCredentials": false}),
        json!({"sha": "da39a3ee5e6b4b0d3255bfef95601890afd80709"}),
        json!({"digest": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}),
        json!({"id": "550e8400-e29b-41d4-a716-446655440000"}),
        json!({"path": "/home/user/projects/metagate/src/telemetry/store/sqlite_backend.rs"}),
        json!({"path": "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"}),
        json!({"fn": "this_is_a_very_long_snake_case_function_name"}),
        json!({"name": "getUserAccountSettingsFromDatabaseWithRetryPolicy"}),
        json!({"name": "test_redact_value_handles_nested_arrays_and_objects_correctly"}),
        json!({"data": "SGVsbG8gd29ybGQsIHRoaXMgaXMgYSB0ZXN0IG1lc3NhZ2UgZm9yIHlvdQ=="}),
        json!({"alphabet": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"}),
        json!({"path": "/usr/include/llvm-14/llvm/MC/MCSymbolELF.h"}),
        json!({"consts": "NL80211_WOWLAN_TRIG_WAKEUP_PKT_8023 TLS_CIPHER_AES_GCM_128_SALT_SIZE"}),
        json!({"dir": "x64-windows/debug/bin/boost_graph-vc141-mt-gd-x64-1_67.dll"}),
        json!({"sym": "llvm/DebugInfo/PDB/PDBSymbolTypeVTable.h thumbv7neon-unknown-linux-gnueabihf"}),
        json!({"file": "diff-cbaef692b3958312e80fd5507a7e2aff071f1acb086f10e8a96bc06a7bb289db.patch"}),
        json!({"command": "du -sh /var/log && df -h # check disk-usage for task-runner-service-production"}),
        json!({"url": "https://github.com/rust-lang/rust/commit/da39a3ee5e6b4b0d3255bfef95601890afd80709"}),
        json!({"url": "https://example.com/search?page=2&sort=desc&q=rust+serde"}),
        json!({"code": "curl -H \"Authorization: Bearer $OPENAI_API_KEY\" https://api.openai.com/v1/models"}),
        json!({"code": "def login(password: str) -> bool:\n    token = get_token(password)\n    self.api_key = api_key\n    return check(token)"}),
        json!({"code": "use crate::token::Lexer;\nlet n = max_tokens: 512;"}),
        json!({"text": "max_tokens: 512, session: 3"}),
        json!({"yaml": "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n"}),
        json!({"when": "2024-01-15T10:30:00Z", "session": 3, "reset": false}),
        json!({"text": "The bearer of this letter is a friend. Tokens are counted per request."}),
        json!({"cmd": "git push -u origin main && sort -u names.txt"}),
        json!({"cmd": "pip install scikit-learn && python -m sk_helper --token-file ~/.tok"}),
        json!(["--password", "-", "short"]),
    ];
    assert!(corpus.len() >= 25);
    for v in corpus {
        let mut got = v.clone();
        let n = redact_value(&mut got);
        assert_eq!(got, v, "changed ({n} replacements)");
        assert_eq!(n, 0);
    }
}

#[test]
fn key_names() {
    for k in [
        "token",
        "access_token",
        "refresh_token",
        "id_token",
        "auth_token",
        "session_token",
        "x-auth-token",
        "GITHUB_TOKEN",
        "csrftoken",
        "backend_token",
        "password",
        "Password2",
        "db.password",
        "newPassword",
        "passwd",
        "passphrase",
        "secret",
        "client_secret",
        "clientSecret",
        "secret_key",
        "secretValue",
        "secretvalue",
        "api_key",
        "API-KEY",
        "apiKey",
        "x-api-key",
        "Api.Key",
        "accessKey",
        "private_key",
        "privateKey",
        "Authorization",
        "proxy-authorization",
        "auth",
        "basic_auth",
        "X-Auth-Key",
        "cookie",
        "Set-Cookie",
        "sessionid",
        "session_key",
        "session_secret",
        "credential",
        "credentials",
        "AWS_SECRET_ACCESS_KEY",
        "password_confirmation",
        "auth_header",
        "headers[Authorization]",
    ] {
        assert!(is_secret_key(k), "{k} should be secret");
    }
    for k in [
        "max_tokens",
        "maxTokens",
        "tokens",
        "token_count",
        "num_tokens",
        "tokenizer",
        "token_type",
        "next_page_token",
        "nextPageToken",
        "eos_token",
        "code",
        "text",
        "query",
        "message",
        "session",
        "reset",
        "runtime",
        "author",
        "authority",
        "oauth",
        "keyboard",
        "key",
        "monkey",
        "secretary",
        "signature",
        "pin",
        "ssn",
        "password_hash",
        "password_file",
        "token_url",
        "xauthority",
        "",
        "__",
        "keys",
    ] {
        assert!(!is_secret_key(k), "{k} should not be secret");
    }
}

#[test]
fn text_shapes() {
    let cases = [
        (
            "curl -H \"Authorization: Bearer abc.def\"",
            "curl -H \"Authorization: Bearer [REDACTED]\"",
        ),
        (
            "https://api.example.com/v1?api_key=XYZ&x=1",
            "https://api.example.com/v1?api_key=[REDACTED]&x=1",
        ),
        ("PASSWORD=hunter2 ./run", "PASSWORD=[REDACTED] ./run"),
        (
            "redis://:s3cret@cache:6379/0 and https://u:p4ss@h.example/x",
            "redis://:[REDACTED]@cache:6379/0 and https://u:[REDACTED]@h.example/x",
        ),
        (
            "{\\\"password\\\": \\\"abc def\\\", \\\"user\\\": \\\"bob\\\"}",
            "{\\\"password\\\": \\\"[REDACTED]\\\", \\\"user\\\": \\\"bob\\\"}",
        ),
        ("Cookie: a=1; b=2\nHost: x", "Cookie: [REDACTED]\nHost: x"),
        ("token = \"hardcoded-123\"", "token = \"[REDACTED]\""),
        ("password = hunter2", "password = [REDACTED]"),
        ("x AKIAIOSFODNN7EXAMPLE y", "x [REDACTED] y"),
        (
            "OPENAI_API_KEY=sk-abcDEF1234567890ghij",
            "OPENAI_API_KEY=[REDACTED]",
        ),
        (
            "a -----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY----- b",
            "a [REDACTED] b",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(redact_text(input).as_deref(), Some(want), "{input}");
    }
    assert_eq!(redact_text("short"), None);
    assert_eq!(redact_text("Authorization: Bearer [REDACTED]"), None);
    assert_eq!(redact_text("disk-usage-for-the-whole-cluster-1234"), None);
}

#[test]
fn counts() {
    let mut v = json!({
        "password": "x1",
        "nested": [{"token": 5}, "Authorization: Bearer abcdef123456 and ghp_R2d2C3poBb8Ee9Ff0Gg1Hh2Ii3Jj4Kk5Ll6"],
    });
    assert_eq!(redact_value(&mut v), 4);
    assert_eq!(redact_value(&mut v), 0);
}

#[test]
fn secrets_told_in_prose() {
    for (text, secret) in [
        ("my password is S3cr3tPassw0rd, log in", "S3cr3tPassw0rd"),
        ("The API key was AbCdEfGh12345.", "AbCdEfGh12345"),
        (
            "wifi passphrase is correct-horse-battery!",
            "correct-horse-battery",
        ),
        ("your token is tk_9f8e7d6c", "tk_9f8e7d6c"),
    ] {
        let out = redact_text(text).unwrap_or_else(|| panic!("nothing found in {text}"));
        assert!(!out.contains(secret), "{out}");
    }
    for text in [
        "the password is wrong, try again",
        "the token is expired",
        "this key is missing from the map",
        "the password is required",
    ] {
        assert_eq!(redact_text(text), None, "{text}");
    }
}

/// Issue 24: each of these reached the store before, whole or in part.
#[test]
fn issue_24_texts_are_redacted() {
    for (text, want) in [
        (
            "mycli --password=Nb7p&Y@b3vDDAYBE --verbose",
            "mycli --password=[REDACTED] --verbose",
        ),
        (
            "mysql -u root -pXq7vR2mP9 -h db",
            "mysql -u root -p[REDACTED] -h db",
        ),
        (
            "mysql -uroot -p'Xq 7v' app",
            "mysql -uroot -p'[REDACTED]' app",
        ),
        (
            "docker exec -it db mysql -uroot -pDk8rExec3 -e 'show tables'",
            "docker exec -it db mysql -uroot -p[REDACTED] -e 'show tables'",
        ),
        (
            "bash -c \"mysqldump -u admin -pDumpPw7Qx shop > shop.sql\"",
            "bash -c \"mysqldump -u admin -p[REDACTED] shop > shop.sql\"",
        ),
        (
            "sshpass -p 'Lk8#pQ2wZ' ssh admin@host",
            "sshpass -p '[REDACTED]' ssh admin@host",
        ),
        (
            "sshpass -pLk8pQ2wZx scp f h:",
            "sshpass -p[REDACTED] scp f h:",
        ),
        (
            "docker login -u bob -p Dk3rPw9xQ registry.example.com",
            "docker login -u bob -p [REDACTED] registry.example.com",
        ),
        (
            "redis-cli -h cache -a Rd5sPw8qZ ping",
            "redis-cli -h cache -a [REDACTED] ping",
        ),
        (
            "redis-cli --pass RdPass5Yt info",
            "redis-cli --pass [REDACTED] info",
        ),
        (
            "zip -r -P Zp9wQ2xL out.zip dir",
            "zip -r -P [REDACTED] out.zip dir",
        ),
        (
            "ldapsearch -x -D cn=admin -w Ld4pW7qZ -b dc=ex",
            "ldapsearch -x -D cn=admin -w [REDACTED] -b dc=ex",
        ),
        (
            "smbclient //srv/share -U alice%Sm8bPw3qZ -c ls",
            "smbclient //srv/share -U alice%[REDACTED] -c ls",
        ),
        ("pwd=Pw6dQ9xZ ./run.sh", "pwd=[REDACTED] ./run.sh"),
        (
            "connect?user=bob&pwd=Pw6dQ9xZ&db=1",
            "connect?user=bob&pwd=[REDACTED]&db=1",
        ),
        (
            "Server=db;Uid=sa;Pwd=OdbcPw4Kz9;",
            "Server=db;Uid=sa;Pwd=[REDACTED];",
        ),
        (
            "<user>bob</user><password>Xm1Pw4qZt</password>",
            "<user>bob</user><password>[REDACTED]</password>",
        ),
        (
            "<db:Password type=\"x\">Xm1 Pw4</db:Password>",
            "<db:Password type=\"x\">[REDACTED]</db:Password>",
        ),
        (
            "<secret><![CDATA[Cd4t&Sec9]]></secret>",
            "<secret><![CDATA[[REDACTED]]]></secret>",
        ),
        (
            "<add key=\"ClearTextPassword\" value=\"NuPw6Xz2\" />",
            "<add key=\"ClearTextPassword\" value=\"[REDACTED]\" />",
        ),
        (
            "env:\n  - name: DB_PASSWORD\n    value: YmlK8s4Pw\n",
            "env:\n  - name: DB_PASSWORD\n    value: [REDACTED]\n",
        ),
        ("smtp:\n  pass: YamlPs6Qw\n", "smtp:\n  pass: [REDACTED]\n"),
        (
            "curl -H \"X-DB-Pass: HdrTxt8Pw\" https://x",
            "curl -H \"X-DB-Pass: [REDACTED]\" https://x",
        ),
        (
            "the password hunter2zz for the staging box",
            "the password [REDACTED] for the staging box",
        ),
        (
            "use password Hn7tQ2zX to log in",
            "use password [REDACTED] to log in",
        ),
        (
            "https://a.blob.core.windows.net/c/f?sv=2020&sig=8f7d6e5c4b3a2918ff0e1d2c3b4a5968&se=2025",
            "https://a.blob.core.windows.net/c/f?sv=2020&sig=[REDACTED]&se=2025",
        ),
        (
            "https://b.s3.amazonaws.com/k?X-Amz-Expires=300&X-Amz-Signature=4a5b6c7d8e9f00112233445566778899",
            "https://b.s3.amazonaws.com/k?X-Amz-Expires=300&X-Amz-Signature=[REDACTED]",
        ),
        (
            "ssh-keygen -t ed25519 -N 'Kg7nPw3Qz' -f key",
            "ssh-keygen -t ed25519 -N '[REDACTED]' -f key",
        ),
        (
            "openssl pkcs12 -export -passout pass:P12Out5Kq -out c.p12",
            "openssl pkcs12 -export -passout pass:[REDACTED] -out c.p12",
        ),
        (
            "keytool -list -keystore ks.jks -storepass Ks9tPw2Lm",
            "keytool -list -keystore ks.jks -storepass [REDACTED]",
        ),
        (
            "sqlplus -s scott/Tig3rOra7@orcl @r.sql",
            "sqlplus -s scott/[REDACTED]@orcl @r.sql",
        ),
        // gitleaks' curl rule takes the user name with the password.
        (
            "curl -uadmin:CurlAtt4Pw https://x",
            "curl -u[REDACTED] https://x",
        ),
        (
            "export SSHPASS=SshEnv4Pw && sshpass -e ssh h",
            "export SSHPASS=[REDACTED] && sshpass -e ssh h",
        ),
        (
            "databricks jobs list # dapi1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d",
            "databricks jobs list # [REDACTED]",
        ),
        (
            "MAILCHIMP_KEY=3f2e1d0c9b8a7f6e5d4c3b2a1f0e9d8c-us20 node sync.js",
            "MAILCHIMP_KEY=[REDACTED] node sync.js",
        ),
        // An `&` outside a URL query is part of the value, as after `--password=`.
        (
            "DB_PASSWORD=Nb7p&Y@b3vDDAYBE ./migrate",
            "DB_PASSWORD=[REDACTED] ./migrate",
        ),
        ("password=Nb7p&Y@b3vDDAYBE", "password=[REDACTED]"),
        // A capitalized `…Pass` is read as `pass`: a password is still one.
        ("AdminPass=Hn7tQ2zX ./run", "AdminPass=[REDACTED] ./run"),
        ("DbPass: Hn7tQ2zX", "DbPass: [REDACTED]"),
        (
            "PASSWORD=Pq7w&Z2x && make deploy",
            "PASSWORD=[REDACTED] && make deploy",
        ),
        // ... but ends it in a query or before the next pair of a form body.
        (
            "login?user=a&password=Pq7wZ2x&next=/home",
            "login?user=a&password=[REDACTED]&next=/home",
        ),
        (
            "curl -d 'password=Pq7wZ2x&user=bob' https://x",
            "curl -d 'password=[REDACTED]&user=bob' https://x",
        ),
        // `-u` followed by a URL keeps the URL; its password is the URL rule's.
        (
            "redis-cli -u redis://default:Rd7sUrlPw@cache:6379 ping",
            "redis-cli -u redis://default:[REDACTED]@cache:6379 ping",
        ),
        // A last `!` or `?` is part of the password.
        (
            "use password Summer2024! to log in",
            "use password [REDACTED] to log in",
        ),
        ("the password is P@ssw0rd!", "the password is [REDACTED]"),
        (
            "samba-tool user list -U admin%Sb4tPw9q",
            "samba-tool user list -U admin%[REDACTED]",
        ),
        (
            "winexe -U 'DOM/admin%Wx3ePw8Z' //host cmd",
            "winexe -U 'DOM/admin%[REDACTED]' //host cmd",
        ),
    ] {
        assert_eq!(redact_text(text).as_deref(), Some(want), "{text}");
    }
}

/// Issue 24, in values: keys `pass` and `pwd`, name/value pairs, argv arrays.
#[test]
fn issue_24_values_are_redacted() {
    for (mut value, want) in [
        (
            json!({"user": "bob", "pass": "Ps7wQ2zX"}),
            json!({"user": "bob", "pass": REDACTED}),
        ),
        (
            json!({"db": {"pwd": "Ps7wQ2zX"}}),
            json!({"db": {"pwd": REDACTED}}),
        ),
        (json!({"DB_PASS": 73519468}), json!({"DB_PASS": REDACTED})),
        (
            json!({"env": [{"name": "DB_PASSWORD", "value": "K8sEnvPw3"}, {"name": "USER", "value": "bob"}]}),
            json!({"env": [{"name": "DB_PASSWORD", "value": REDACTED}, {"name": "USER", "value": "bob"}]}),
        ),
        (
            json!([{"key": "X-Api-Key", "value": "NvKey5Qz8"}]),
            json!([{"key": "X-Api-Key", "value": REDACTED}]),
        ),
        (
            json!(["mysql", "-uroot", "-pMyArgv9Zq", "app"]),
            json!(["mysql", "-uroot", "-p[REDACTED]", "app"]),
        ),
        (
            json!(["sshpass", "-p", "SshArgv3Zt", "ssh", "host"]),
            json!(["sshpass", "-p", REDACTED, "ssh", "host"]),
        ),
        (
            json!(["smbclient", "//srv/x", "-U", "eve%SmArgv2Pw"]),
            json!(["smbclient", "//srv/x", "-U", "eve%[REDACTED]"]),
        ),
        (
            json!(["redis-cli", "--pass", "RdPass5Yt"]),
            json!(["redis-cli", "--pass", REDACTED]),
        ),
    ] {
        redact_value(&mut value);
        assert_eq!(value, want);
    }
    for (path, mut value, want) in [
        ("/password", json!(73519468), json!(REDACTED)),
        ("/credentials/pin", json!(1234), json!(REDACTED)),
        ("/db/pass", json!("Abc7Tok"), json!(REDACTED)),
        ("/db/pass", json!(12), json!(12)),
        ("/user", json!("bob"), json!("bob")),
        (
            "/code",
            json!("mysql -pX7q9Zt2"),
            json!("mysql -p[REDACTED]"),
        ),
    ] {
        redact_at_path(path, &mut value);
        assert_eq!(value, want, "{path}");
    }
}

/// What the issue 24 rules must leave alone: the same letters as options of other commands,
/// `pwd` and `pass` as everyday words, tags in prose, URLs and ids without secrets.
#[test]
fn ordinary_commands_and_words_are_kept() {
    for text in [
        "docker run -p 8080:80 nginx && mkdir -p /tmp/x",
        "ssh -p 2222 admin@host uptime",
        "mysql -p appdb < dump.sql",
        "mysql -u root -p",
        "7z x archive.7z -p",
        "git log -p --stat -- src/",
        "grep -w word file.txt; ls -a /tmp",
        "zip -r out.zip dir && unzip -l out.zip",
        "date -u +%Y-%m-%dT%H:%M:%S",
        "printf '%s %d\\n' name 3",
        "smbclient -L //srv -N",
        "smbclient -U alice //srv/share",
        "docker run -u 1000:1000 img",
        "redis-cli -h cache ping",
        "ldapsearch -x -b dc=example,dc=org '(uid=bob)'",
        "sshpass -e ssh host",
        "docker login registry.example.com",
        "docker login --password-stdin -u bob r.io",
        "ssh-keygen -t ed25519 -N '' -f key",
        "openssl enc -aes-256-cbc -pass env:ENC_PASS -in a -out b",
        "openssl req -new -passin file:/run/pw.txt",
        "keytool -list -keystore ks.jks -storepass:env KS_PASS",
        "sqlplus / as sysdba",
        "cd $PWD && echo $OLDPWD",
        "PWD=/home/bob ls",
        "export PWD=~/src",
        "PWD=`pwd`",
        "pwd && ls -la",
        "pass: 3\nfail: 0",
        "the out-of-band pass: tool health",
        "Nothing to pass: {}.",
        "git show 9fceb02d0ae598e95dc970b74767f19372d61af8 --stat",
        "kubectl get pod 550e8400-e29b-41d4-a716-446655440000",
        "curl https://example.com/search?q=rust&page=2&sort=desc",
        "https://api.github.com/repos/rust-lang/rust/commits?sha=master&per_page=5",
        "see https://example.com/docs?signature_help=1",
        "the password field is required",
        "the password reset link expired",
        "rotate the API token daily",
        "session token v2.1.0 released",
        "the password in secrets.json",
        "SELECT password FROM users WHERE id = 5",
        "read -s password && echo ok",
        "replace <token> with your own and keep <password/> empty",
        "<password>${DB_PASSWORD}</password>",
        "<password></password>",
        "- name: HOME\n  value: /root",
        "redis-cli -u redis://cache:6379 ping",
        "the password is wrong.",
        "HOME=/root& sleep 1",
        // Code and markdown that gitleaks' generic rule or "password X" would read as secrets.
        "extern struct passwd *getpwnam (const char *__name);",
        "\t\t       struct passwd **__restrict __result)",
        "    XSecurityAuthorization auth_id; /* revoked authorization id */",
        "\t__token _M_tok;",
        "  extern nss_getsecretkey _nss_##module##_getsecretkey;",
        "#define sqlite3_column_bytes16         sqlite3_api->column_bytes16",
        "**The secrets corpus.** `fixtures/telemetry/secrets.txt` lists them",
        "struct StripSymbolsPass : PassInfoMixin<StripSymbolsPass> {",
        "class LoopPass : public Pass {",
        "    unsigned IsSecArgPass : 1; ///< Second argument",
        "  Pass *ResultPass = nullptr;",
        "  Pass *ResultPass = Resolver->getAnalysisIfAvailable(PI);",
        "#define ed25519_sha512_set_private_key nettle_ed25519_sha512_set_private_key",
        "/// desired input for some register allocators.  This pass is \"required\" by",
        "/// whether \\p Pass is loop-nest pass or not",
    ] {
        assert_eq!(redact_text(text), None, "{text}");
    }
    for value in [
        json!({"pwd": "/home/bob/project"}),
        json!({"tests": {"pass": 12, "fail": 0}}),
        json!({"pass": true}),
        json!({"env": [{"name": "HOME", "value": "/root"}]}),
        json!({"headers": [{"name": "Accept", "value": "application/json"}]}),
        json!(["docker", "run", "-p", "8080:80", "nginx"]),
        json!(["mysql", "-p", "appdb"]),
    ] {
        let mut got = value.clone();
        assert_eq!(redact_value(&mut got), 0, "{value}");
        assert_eq!(got, value);
    }
}

/// Inputs built to make a scanner backtrack end (their speed is the bench's business) and
/// redacting the result again changes nothing.
#[test]
fn adversarial_inputs_finish_and_stay_redacted() {
    let patterns = [
        "eyJ.",
        "eyJhbGciOiJIUzI1.eyJ",
        "SG.",
        "password=${",
        "password=str[",
        "token: {",
        "://",
        "://a:b",
        "-----BEGIN ",
        "-----BEGIN PRIVATE KEY-----",
        "a:",
        "a=",
        "--password ",
        "-u a:",
        "Bearer ",
        "sk-",
        "AKIA",
        "\"password\": \"",
        "Cookie: ${",
        "A",
        "Ab1+",
        "x ",
        "=",
        ":",
        "-",
        "\\\"",
        "<password>",
        "<password>a",
        "</",
        ">",
        "mysql -p",
        "mysql -pa ",
        "smbclient -U a%",
        "value=",
        "name: DB_PASSWORD\nvalue: ",
        "password ",
        "password a1b2c3 ",
        "?sig=",
        "--password=",
        "dapi",
        "key=",
    ];
    for p in patterns {
        let text = p.repeat(200_000 / p.len());
        let once = redact_text(&text);
        if let Some(once) = once {
            assert_eq!(redact_text(&once), None, "{p:?}");
        }
    }
}

#[test]
fn random_keys_are_caught() {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let alphabets: [&[u8]; 3] = [
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        b"abcdefghijklmnopqrstuvwxyz0123456789",
    ];
    for alphabet in alphabets {
        let trials = 1000;
        let caught = (0..trials)
            .filter(|_| {
                let key: String = (0..40)
                    .map(|_| char::from(alphabet[(next() % alphabet.len() as u64) as usize]))
                    .collect();
                redact_text(&format!("value {key} end")).is_some_and(|r| !r.contains(&key))
            })
            .count();
        assert!(caught * 100 >= trials * 97, "{caught}/{trials}");
    }
}

fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("password=".to_string()),
        Just("Authorization: Bearer ".to_string()),
        Just("\"token\": \"".to_string()),
        Just("https://u:p@h/".to_string()),
        Just("://".to_string()),
        Just("-----BEGIN RSA PRIVATE KEY-----\n".to_string()),
        Just("-----END RSA PRIVATE KEY-----".to_string()),
        Just("eyJhbGciOiJIUzI1NiJ9.".to_string()),
        Just("ghp_".to_string()),
        Just("sk-".to_string()),
        Just("AKIA".to_string()),
        Just(REDACTED.to_string()),
        Just("--password ".to_string()),
        Just("-u ".to_string()),
        Just("$TOKEN".to_string()),
        Just("Cookie: ".to_string()),
        Just("\\\"".to_string()),
        "[ \n\"'=:@&,;/.\\\\-]{1,3}",
        "[A-Za-z0-9+/_=-]{1,48}",
        "[ -~]{0,12}",
        any::<String>().prop_map(|s| s.chars().take(8).collect()),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..12).prop_map(|v| v.concat())
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("password".to_string()),
        Just("api_key".to_string()),
        Just("code".to_string()),
        Just("session".to_string()),
        Just("args".to_string()),
        "[a-zA-Z_-]{0,12}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn never_panics(s in any::<String>()) {
        let _ = redact_text(&s);
        let _ = is_secret_key(&s);
    }

    #[test]
    fn text_is_idempotent(s in text()) {
        if let Some(once) = redact_text(&s) {
            prop_assert_eq!(redact_text(&once), None, "once = {:?}", once);
        }
    }

    #[test]
    fn value_is_idempotent(v in json_value()) {
        let mut once = v.clone();
        redact_value(&mut once);
        let mut twice = once.clone();
        let n = redact_value(&mut twice);
        prop_assert_eq!(&once, &twice);
        prop_assert_eq!(n, 0);
    }
}

/// `cargo test --release -- --ignored --nocapture bench` (see also `examples/bench.rs`).
#[test]
#[ignore]
fn bench() {
    let (clean, bearer) = (bench_clean(), bench_bearer());
    for (name, v) in [("clean", clean), ("bearer", bearer)] {
        let iters = 200_000;
        let start = std::time::Instant::now();
        for _ in 0..iters {
            let mut c = std::hint::black_box(&v).clone();
            std::hint::black_box(redact_value(&mut c));
        }
        let per = start.elapsed().as_nanos() as f64 / f64::from(iters);
        println!("{name}: {per:.0} ns/call (clone included)");
    }
}

fn bench_clean() -> Value {
    json!({"runtime":"terminal","code":"cd /home/user/project && cargo build --release 2>&1 | tail -n 20","session":0,"reset":false,"description":"Build the project in release mode"})
}

fn bench_bearer() -> Value {
    json!({"runtime":"terminal","code":"curl -s -H \"Authorization: Bearer abcDEF123456ghiJKL\" https://api.example.com/v1/items?page=2","session":0,"reset":false})
}
