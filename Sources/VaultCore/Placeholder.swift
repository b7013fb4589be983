enum VaultCorePlaceholder {}
