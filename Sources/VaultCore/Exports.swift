// The value types of the tree, the outbox and decoded remote nodes live in the pure planner
// module (`VaultSyncPlan`); every user of VaultCore sees them as before.
@_exported import VaultSyncPlan
