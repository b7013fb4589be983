public enum VaultServerPlaceholder {}
