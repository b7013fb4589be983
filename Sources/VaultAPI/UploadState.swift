/// Where a resumable upload session stands (`UploadStatus.state`).
public enum UploadState: String, Codable, Sendable {
    /// Receiving chunks.
    case active
    /// Every byte arrived and the file is published (`UploadStatus.file`).
    case complete
}
