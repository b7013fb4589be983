enum VaultSQLPlaceholder {}
