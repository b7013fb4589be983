import VaultCore

// Until the end-to-end downloads of feat/e2e-client land (their `ContentDownload.fetchRevision`
// replaces this file): a revision's sealed bytes cannot be fetched and verified yet.
extension ContentDownload {
    func fetchRevision(fileId: String, revisionId: String, content: ContentRecord, nodeId: String) throws -> BlobRecord {
        throw VaultError(.notLocal, "revision \(revisionId) is not on this device, and this build cannot download revisions yet")
    }
}
