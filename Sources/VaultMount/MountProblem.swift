import VaultCore

/// Why a mount could not start, as the vault's typed errors.
enum MountProblem {
    static func session(_ what: String) -> VaultError {
        VaultError(.io, what, hint: "check that fuse3 is installed and /dev/fuse exists; `fusermount3 -u MOUNTPOINT` clears a stale mount")
    }
}
