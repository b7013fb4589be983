// The value types of the tree, the outbox and decoded remote nodes live in the pure planner
// module (`VaultSyncPlan`); the keyslots, keyring sessions, policy and `VaultError` in the key
// side (`VaultKeys`): every user of VaultCore sees them as before.
@_exported import VaultSyncPlan
@_exported import VaultKeys
