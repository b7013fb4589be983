public enum VaultAPIPlaceholder {}
