import VaultSQL

// The enums stored in text columns bind as their raw values, so the tables pass them as
// parameters instead of spelling their values inside the SQL. The spellings themselves are
// the schema's (`MetadataSchema` CHECKs): these bindings never change what is stored.

extension TransferState: SQLBindable { public var sqlValue: SQLValue { .text(rawValue) } }
extension TransferDirection: SQLBindable { public var sqlValue: SQLValue { .text(rawValue) } }
extension BlobArea: SQLBindable { public var sqlValue: SQLValue { .text(rawValue) } }
extension OutboxOp: SQLBindable { public var sqlValue: SQLValue { .text(rawValue) } }
extension OutboxState: SQLBindable { public var sqlValue: SQLValue { .text(rawValue) } }
extension ContentState: SQLBindable { public var sqlValue: SQLValue { .text(rawValue) } }
extension NodeType: SQLBindable { public var sqlValue: SQLValue { .text(rawValue) } }
extension PendingOp: SQLBindable { public var sqlValue: SQLValue { .text(rawValue) } }
