import VaultAPI
import VaultCore

extension FileResource {
    /// The file as the codec opens it (`RemoteCodec.open`): every string still sealed.
    var sealed: SealedRemoteEntry {
        SealedRemoteEntry(id: id, parentId: parentId, name: name, isFolder: type == .folder, size: size, version: version,
                          trashed: trashed, meta: meta, contentMeta: contentMeta)
    }
}
