// swift-tools-version:6.0
import PackageDescription

/// vault: an encrypted offline vault for a cloud drive — library layers, the `vault` CLI and the
/// reference `vault-server`. C libraries come from Debian as system-library targets; what Swift
/// cannot call directly (variadic calls, macros, packed structs) goes through one small shim
/// target per C library, each with its own prefix (`CCurlShims_…`, `CSecretShims_…`).
let package = Package(
    name: "vault",
    products: [
        .executable(name: "vault", targets: ["vault"]),
        .executable(name: "vault-server", targets: ["vault-server"]),
        .executable(name: "vault-agent", targets: ["vault-agent"]),
        .library(name: "VaultCore", targets: ["VaultCore"]),
    ],
    targets: [
        // Layer 1: C libraries.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CSQLCipher", pkgConfig: "sqlcipher", providers: [.apt(["libsqlcipher-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CSecret", pkgConfig: "libsecret-1", providers: [.apt(["libsecret-1-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CGio", pkgConfig: "gio-2.0", providers: [.apt(["libglib2.0-dev"])]),
        .systemLibrary(name: "CFuse3", pkgConfig: "fuse3", providers: [.apt(["libfuse3-dev"])]),
        .systemLibrary(name: "CTSS2", pkgConfig: "tss2-esys", providers: [.apt(["libtss2-dev"])]),
        .systemLibrary(name: "CFIDO2", pkgConfig: "libfido2", providers: [.apt(["libfido2-dev"])]),
        // PostgreSQL's client library; no shim: every call vault makes is non-variadic.
        .systemLibrary(name: "CPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // One shim target per C library, named and prefixed after it.
        .target(name: "CSecretShims", dependencies: ["CSecret"]),
        .target(name: "CCurlShims", dependencies: ["CCurl"]),
        .target(name: "CMicroHTTPDShims", dependencies: ["CMicroHTTPD"]),
        .target(name: "CGioShims", dependencies: ["CGio"]),
        .target(name: "CFuseShims", dependencies: ["CFuse3"]),
        // tpm2-tss's ESAPI: the sealing, unsealing and lockout queries vault needs, with the
        // TPM's templates and marshalled structures kept in C.
        .target(name: "CTPMShims", dependencies: ["CTSS2"],
                linkerSettings: [.linkedLibrary("tss2-tctildr"), .linkedLibrary("tss2-sys"), .linkedLibrary("tss2-mu"), .linkedLibrary("tss2-rc")]),
        // libfido2: a credential with hmac-secret and an assertion returning its output, over HID
        // or (tests) a Unix socket to a software authenticator, its objects kept in C.
        .target(name: "CFIDO2Shims", dependencies: ["CFIDO2"]),
        // Linux and glibc calls (prctl, ioctl, xattr, posix_spawn, epoll).
        .target(name: "CLinuxShims"),
        .systemLibrary(name: "CNcurses", pkgConfig: "ncursesw", providers: [.apt(["libncurses-dev"])]),
        // The terminal guard (restores the terminal on signals); C because handlers must be async-signal-safe.
        .target(name: "CTerminalShims", dependencies: ["CNcurses"]),

        // Layer 1½: what client and server both need, with no C library: hex, base64url, the
        // EINTR-safe read/write loops and file operations, name rules, the seeded SplitMix64 of
        // tests, the simulation and test faults (VaultPrimitives); the
        // command-line parser with its help, man-page and completion generators (VaultArguments);
        // SHA-256 through OpenSSL (VaultDigest, so the server need not depend on VaultCrypto).
        .target(name: "VaultPrimitives"),
        .target(name: "VaultArguments"),
        .target(name: "VaultDigest", dependencies: ["COpenSSL"]),

        // Layer 2: crypto.
        .target(name: "VaultCrypto", dependencies: ["CSodium", "COpenSSL", "VaultDigest", "VaultPrimitives"]),
        // A TPM 2.0 behind typed Swift: seal and unseal a secret under a primary the TPM derives,
        // with an optional PIN (PolicyAuthValue) and PCR binding; errors a user can act on.
        .target(name: "VaultTPM", dependencies: ["CTPMShims", "VaultCrypto"]),
        // A FIDO2 security key behind typed Swift: enroll a credential with hmac-secret, get its
        // output for a salt (touch, optional PIN); errors a user can act on.
        .target(name: "VaultFIDO2", dependencies: ["CFIDO2Shims", "VaultCrypto"]),
        // Shared typed SQLite/SQLCipher wrapper (client keyed, server unkeyed).
        .target(name: "VaultSQL", dependencies: ["CSQLCipher", "VaultPrimitives"]),
        // PostgreSQL (libpq) behind the same `SQLConnection` as VaultSQL's SQLite: the server's
        // metadata store past one machine (issue 22).
        .target(name: "VaultPostgres", dependencies: ["CPQ", "VaultSQL"]),
        .target(name: "VaultHTTP", dependencies: ["CCurl", "CCurlShims"]),
        // The pure sync planner and the value types it plans over (nodes, outbox entries, decoded
        // remote nodes) and reports (push and pull summaries): no I/O, no clock, no randomness.
        // VaultCore re-exports it.
        .target(name: "VaultSyncPlan"),
        // Layer 3: the key side, with no database: the layout, keyslots and the keyslot file, the key
        // hierarchy, recovery and org keys, keyring sessions and the agent's wrapped key, the
        // policy and the failed-unlock count, process hardening, `VaultError`, and the small helpers
        // they use (POSIX file writes, SourceFile, DisplayText, ByteCount, RemotePadding). What the
        // agent needs, so that `vault-agent` links no SQLCipher (VaultCLIUnitTests/AgentLinkageTests).
        .target(name: "VaultKeys", dependencies: ["VaultSyncPlan", "VaultCrypto", "VaultPrimitives", "VaultTPM", "CSecretShims", "CLinuxShims"]),
        // Layer 3: the vault: the metadata database, tree, blob store, outbox, sessions that open
        // it (`VaultSessions`). Re-exports VaultKeys and VaultSyncPlan.
        .target(name: "VaultCore", dependencies: ["VaultKeys", "VaultSyncPlan", "VaultCrypto", "VaultSQL", "VaultPrimitives", "VaultTPM", "VaultFIDO2", "CLinuxShims"]),
        // Layer 4: transfers and sync, built only on the vault's sealed API.
        .target(name: "VaultSync", dependencies: ["VaultCore", "VaultHTTP", "VaultAPI", "VaultCrypto", "VaultPrimitives", "CGioShims"]),
        // `vault mount`: the vault as a folder through libfuse3's low-level API (docs/mount.md),
        // built only on the vault's sealed API.
        .target(name: "VaultMount", dependencies: ["VaultCore", "VaultSync", "VaultCrypto", "VaultPrimitives", "CFuseShims", "CLinuxShims"]),
        // The background agent: session owner, timers, D-Bus signals, socket server, the scheduling
        // of sync passes (run by `vault agent work` and `vault agent listen`, in VaultCLI), and its
        // client. No VaultSync: the `vault-agent` executable links no HTTP client (docs/agent.md);
        // no VaultCore: it links no SQLCipher either (it holds keys, never opens the database).
        .target(name: "VaultAgent", dependencies: ["VaultKeys", "VaultSyncPlan", "VaultCrypto", "VaultPrimitives", "CGioShims", "CLinuxShims"]),
        // Layer 6: the full-screen terminal (ncurses behind typed Swift), the browser's pure model
        // (no terminal: unit-tested as plain values), and thin executables.
        .target(name: "VaultTerminal", dependencies: ["CNcurses", "CTerminalShims"]),
        .target(name: "VaultBrowseModel", dependencies: ["VaultCore"]),
        .target(name: "VaultCLI", dependencies: ["VaultCore", "VaultCrypto", "VaultSync", "VaultArguments", "VaultPrimitives", "CLinuxShims",
                                                 "VaultTerminal", "VaultBrowseModel", "VaultAgent", "VaultMount", "VaultTPM", "VaultFIDO2"]),
        .executableTarget(name: "vault", dependencies: ["VaultCLI", "CLinuxShims"],
                          swiftSettings: [.unsafeFlags(["-static-stdlib"])],
                          linkerSettings: [.unsafeFlags(["-static-stdlib", "-use-ld=lld"])]),
        .executableTarget(name: "vault-server", dependencies: ["VaultServer"]),
        // The long-lived agent alone (`vault agent` becomes it), so that its idle memory holds no
        // pages of libcurl, libmicrohttpd or ncurses, with the Swift runtime and Foundation linked
        // statically (the toolchain's swift_static; its lld, which does not repeat glibc's mktemp
        // link warning for the static Foundation): only the pages it uses are resident
        // (docs/agent.md "Measured": 26 MiB idle instead of 31).
        .executableTarget(name: "vault-agent", dependencies: ["VaultAgent"],
                          swiftSettings: [.unsafeFlags(["-static-stdlib"])],
                          linkerSettings: [.unsafeFlags(["-static-stdlib", "-use-ld=lld"])]),
        .executableTarget(name: "vault-bench", dependencies: ["VaultCrypto"]),
        // The multi-device sync simulation (the planner and the push decisions against a model of
        // the server), and its runner for many seeds (scripts/sim.sh).
        .target(name: "VaultSimulation", dependencies: ["VaultSyncPlan", "VaultPrimitives"]),
        .executableTarget(name: "vault-sim", dependencies: ["VaultSimulation", "VaultArguments"]),
        // Layer 5: the reference server; shares only the API models with the client.
        .target(name: "VaultAPI"),
        .target(name: "VaultServer", dependencies: ["VaultAPI", "VaultSQL", "VaultPostgres", "VaultHTTP", "VaultPrimitives", "VaultArguments", "VaultDigest", "CSodium", "COpenSSL", "CMicroHTTPD", "CMicroHTTPDShims", "CLinuxShims"]),

        .testTarget(name: "VaultCryptoTests", dependencies: ["VaultCrypto", "VaultPrimitives", "VaultTestSupport"]),
        .testTarget(name: "VaultSQLTests", dependencies: ["VaultSQL"]),
        // Against a real PostgreSQL: a cluster of the test's own on loopback (PostgresCluster).
        .testTarget(name: "VaultPostgresTests", dependencies: ["VaultPostgres", "VaultSQL", "VaultTestSupport"]),
        // Against a real TPM 2.0: an swtpm process of each test's own, over a Unix socket.
        .testTarget(name: "VaultTPMTests", dependencies: ["VaultTPM", "VaultCrypto", "VaultPrimitives", "VaultTestSupport"]),
        // Against the software FIDO2 authenticator (scripts/soft-fido2.py), one per test.
        .testTarget(name: "VaultFIDO2Tests", dependencies: ["VaultFIDO2", "VaultCrypto", "VaultTestSupport"]),
        .testTarget(name: "VaultCoreTests", dependencies: ["VaultCore", "VaultKeys", "VaultCrypto", "VaultTestSupport", "VaultTPM"]),
        .testTarget(name: "VaultSyncPlanTests", dependencies: ["VaultSyncPlan", "VaultSimulation", "VaultTestSupport"]),
        // Seeded operation generators and models of the expected tree, shared by the sync tests
        // (and the multi-device simulation); the seeded test data and printed seeds (TestData,
        // TestSeed: VAULT_TEST_SEED replays a run); the one wait-for-an-event helper of the tests
        // (Waiting.swift); where the built executables are (BuiltProducts), a tool's output, and a
        // keyslot file re-checksummed after an edit (KeyslotBytes, SHA-256 from VaultDigest).
        .target(name: "VaultTestSupport", dependencies: ["VaultPrimitives", "VaultDigest"], path: "Tests/VaultTestSupport"),
        .testTarget(name: "VaultCLITests", dependencies: ["VaultCore", "VaultKeys", "VaultCrypto", "VaultSync", "VaultHTTP", "VaultTestSupport", "VaultPrimitives",
                                                      "VaultTPM", "VaultFIDO2"]),
        // The I/O side of sync (VaultSync): retries, resumed uploads and downloads, the change
        // feed's pages, against the reference server in the test process (a throwaway data folder).
        .testTarget(name: "VaultSyncTests", dependencies: ["VaultSync", "VaultCore", "VaultServer", "VaultAPI", "VaultCrypto",
                                                           "VaultPrimitives", "VaultTestSupport"]),
        .testTarget(name: "VaultServerTests", dependencies: ["VaultServer", "VaultAPI", "VaultPostgres", "VaultTestSupport"]),
        .testTarget(name: "VaultHTTPTests", dependencies: ["VaultHTTP", "VaultTestSupport"]),
        .testTarget(name: "VaultArgumentsTests", dependencies: ["VaultArguments", "VaultTestSupport"]),
        // The command definitions of both executables: help, misplaced options, and the generated
        // man pages and completions (docs/, completions/) against what the code says.
        .testTarget(name: "VaultCLIUnitTests", dependencies: ["VaultCLI", "VaultServer", "VaultArguments", "VaultAgent", "VaultCore", "VaultTestSupport"]),
        .testTarget(name: "VaultPrimitivesTests", dependencies: ["VaultPrimitives"]),
        .testTarget(name: "VaultAgentTests", dependencies: ["VaultAgent", "VaultSync", "VaultCore", "VaultCrypto"]),
        // The mount's tables and mappings without a mount (the end-to-end tests are VaultCLITests/MountTests).
        .testTarget(name: "VaultMountTests", dependencies: ["VaultMount", "VaultCore", "VaultCrypto", "VaultPrimitives"]),
        .testTarget(name: "VaultBrowseTests", dependencies: ["VaultBrowseModel", "VaultTerminal", "VaultCore", "VaultTestSupport"]),
    ]
)
