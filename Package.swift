// swift-tools-version:6.0
import PackageDescription

/// vault: an encrypted offline vault for a cloud drive — library layers, the `vault` CLI and the
/// reference `vault-server`. C libraries come from Debian as system-library targets; variadic C
/// calls go through the tiny typed `CVaultShims` target.
let package = Package(
    name: "vault",
    products: [
        .executable(name: "vault", targets: ["vault"]),
        .executable(name: "vault-server", targets: ["vault-server"]),
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
        .systemLibrary(name: "CNcurses", pkgConfig: "ncursesw", providers: [.apt(["libncurses-dev"])]),
        .target(name: "CVaultShims", dependencies: ["CSecret", "CCurl", "CMicroHTTPD"]),
        // The terminal guard (restores the terminal on signals); C because handlers must be async-signal-safe.
        .target(name: "CTerminalShims", dependencies: ["CNcurses"]),

        // Layer 2: crypto.
        .target(name: "VaultCrypto", dependencies: ["CSodium", "COpenSSL"]),
        // Shared typed SQLite/SQLCipher wrapper (client keyed, server unkeyed).
        .target(name: "VaultSQL", dependencies: ["CSQLCipher"]),
        .target(name: "VaultHTTP", dependencies: ["CCurl", "CVaultShims"]),
        // The pure sync planner and the value types it plans over (nodes, outbox entries, decoded
        // remote nodes): no I/O, no clock, no randomness. VaultCore re-exports it.
        .target(name: "VaultSyncPlan"),
        // Layer 3: the vault.
        .target(name: "VaultCore", dependencies: ["VaultSyncPlan", "VaultCrypto", "VaultSQL", "CSecret", "CVaultShims"]),
        // Layer 4: transfers and sync, built only on the vault's sealed API.
        .target(name: "VaultSync", dependencies: ["VaultCore", "VaultHTTP", "VaultAPI", "VaultCrypto"]),
        // The background agent: session owner, timers, D-Bus signals, socket server, sync passes.
        .target(name: "VaultAgent", dependencies: ["VaultCore", "VaultCrypto", "VaultSync", "CVaultShims"]),
        // Layer 6: the full-screen terminal (ncurses behind typed Swift), the browser's pure model
        // (no terminal: unit-tested as plain values), and thin executables.
        .target(name: "VaultTerminal", dependencies: ["CNcurses", "CTerminalShims"]),
        .target(name: "VaultBrowseModel", dependencies: ["VaultCore"]),
        .target(name: "VaultCLI", dependencies: ["VaultCore", "VaultCrypto", "VaultSync", "VaultAgent", "CVaultShims", "VaultTerminal", "VaultBrowseModel"]),
        .executableTarget(name: "vault", dependencies: ["VaultCLI"]),
        .executableTarget(name: "vault-server", dependencies: ["VaultServer"]),
        .executableTarget(name: "vault-bench", dependencies: ["VaultCrypto"]),
        // The multi-device sync simulation (the planner and the push decisions against a model of
        // the server), and its runner for many seeds (scripts/sim.sh).
        .target(name: "VaultSimulation", dependencies: ["VaultSyncPlan"]),
        .executableTarget(name: "vault-sim", dependencies: ["VaultSimulation"]),
        // Layer 5: the reference server; shares only the API models with the client.
        .target(name: "VaultAPI"),
        .target(name: "VaultServer", dependencies: ["VaultAPI", "VaultSQL", "CSodium", "COpenSSL", "CMicroHTTPD", "CVaultShims"]),

        .testTarget(name: "VaultCryptoTests", dependencies: ["VaultCrypto"]),
        .testTarget(name: "VaultSQLTests", dependencies: ["VaultSQL"]),
        .testTarget(name: "VaultCoreTests", dependencies: ["VaultCore", "VaultCrypto"]),
        .testTarget(name: "VaultSyncPlanTests", dependencies: ["VaultSyncPlan", "VaultSimulation"]),
        // Seeded operation generators and models of the expected tree, shared by the sync tests
        // (and the multi-device simulation); pure Swift, no I/O.
        .target(name: "VaultTestSupport", path: "Tests/VaultTestSupport"),
        .testTarget(name: "VaultCLITests", dependencies: ["VaultCore", "VaultCrypto", "VaultSync", "VaultHTTP", "VaultTestSupport"]),
        .testTarget(name: "VaultServerTests", dependencies: ["VaultServer", "VaultAPI"]),
        .testTarget(name: "VaultHTTPTests", dependencies: ["VaultHTTP"]),
        .testTarget(name: "VaultAgentTests", dependencies: ["VaultAgent", "VaultSync", "VaultCore", "VaultCrypto"]),
        .testTarget(name: "VaultBrowseTests", dependencies: ["VaultBrowseModel", "VaultTerminal", "VaultCore"]),
    ]
)
