import VaultSQL

// The enums stored in text columns bind as their raw values, so the tables pass them as
// parameters instead of spelling their values inside the SQL. The spellings themselves are
// the schema's (`MetadataSchema` CHECKs): these bindings never change what is stored.
// The outbox's op and state bind as schema 11's small integers (`OutboxTable.Codes`), a blob's
// area as schema 12's (`BlobsTable.Codes`).

extension TransferState: SQLBindable { public var sqlValue: SQLValue { .text(rawValue) } }
extension TransferDirection: SQLBindable { public var sqlValue: SQLValue { .text(rawValue) } }
extension BlobArea: SQLBindable { public var sqlValue: SQLValue { .integer(BlobsTable.Codes.code(self)) } }
extension OutboxOp: SQLBindable { public var sqlValue: SQLValue { .integer(OutboxTable.Codes.code(self)) } }
extension OutboxState: SQLBindable { public var sqlValue: SQLValue { .integer(OutboxTable.Codes.code(self)) } }
extension ContentState: SQLBindable { public var sqlValue: SQLValue { .text(rawValue) } }
extension NodeType: SQLBindable { public var sqlValue: SQLValue { .text(rawValue) } }
extension PendingOp: SQLBindable { public var sqlValue: SQLValue { .text(rawValue) } }
