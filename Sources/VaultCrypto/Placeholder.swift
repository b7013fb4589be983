enum VaultCryptoPlaceholder {}
