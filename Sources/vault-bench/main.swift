// vault-bench: measures the sealed stream format's seal and unseal throughput on one core, in
// memory, for scripts/bench-vault.sh. Prints one JSON object per measurement.
import Foundation
import VaultCrypto
#if canImport(Glibc)
import Glibc
#endif

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

let args = CommandLine.arguments
let totalMiB = args.count > 1 ? Int(args[1]) ?? 1024 : 1024
let segment = args.count > 2 ? Int(args[2]) ?? SealedBlobHeader.defaultSegmentSize : SealedBlobHeader.defaultSegmentSize
let total = totalMiB << 20
let piece = 1 << 20
var input = [UInt8](repeating: 0, count: piece)
for i in input.indices { input[i] = UInt8(truncatingIfNeeded: i &* 7) }

let vaultId = SecureRandom.bytes(16), blobId = SecureRandom.bytes(16)
let wrapKey = SecureBytes.random(count: 32)

// 1. Seal alone: the sealed stream format into a sink that discards (what one core can seal).
let discard = try SealedBlobWriter(vaultId: vaultId, blobId: SecureRandom.bytes(16), keyEpoch: 1, wrapKey: wrapKey,
                                   segmentSize: segment, computeChecksum: false) { _ in }
var t0 = now()
var fed = 0
try input.withUnsafeBytes { buf in
    while fed < total { try discard.write(buf); fed += piece }
}
_ = try discard.finish()
let sealSeconds = now() - t0

// 2. Seal into a file in /dev/shm (RAM) so unseal can pread it back without disk effects.
let shmPath = "/dev/shm/vault-bench-\(getpid())"
let fd = open(shmPath, O_RDWR | O_CREAT | O_TRUNC, 0o600)
guard fd >= 0 else { fatalError("cannot create \(shmPath)") }
unlink(shmPath)
var sealedBytes: UInt64 = 0
let writer = try SealedBlobWriter(vaultId: vaultId, blobId: blobId, keyEpoch: 1, wrapKey: wrapKey, segmentSize: segment) { buf in
    var off = 0
    while off < buf.count { let n = write(fd, buf.baseAddress! + off, buf.count - off); precondition(n > 0); off += n }
    sealedBytes += UInt64(buf.count)
}
// Warm up the page allocation of the memfd so the timing measures crypto, not page faults.
_ = ftruncate(fd, off_t(total + total / segment * 16 + 4096))
t0 = now()
var written = 0
try input.withUnsafeBytes { buf in
    while written < total { try writer.write(buf); written += piece }
}
_ = try writer.finish()
let sealToFileSeconds = now() - t0
_ = ftruncate(fd, off_t(sealedBytes))

// 3. Unseal from memory (the same bytes mapped in): what one core can authenticate and decrypt.
let mapped = mmap(nil, Int(sealedBytes), PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0)!
let sealedMemory = UnsafeRawBufferPointer(start: mapped, count: Int(sealedBytes))
t0 = now()
let memReader = try SealedBlobReader(memory: sealedMemory, wrapKey: wrapKey, expectedVaultId: vaultId, expectedBlobId: blobId)
var seen: UInt64 = 0
try memReader.stream { seen += UInt64($0.count) }
let unsealSeconds = now() - t0
precondition(seen == UInt64(total))

// 4. Unseal through pread from the file (page cache): adds a kernel copy per byte.
t0 = now()
let reader = try SealedBlobReader(fileDescriptor: fd, fileSize: sealedBytes, wrapKey: wrapKey, expectedVaultId: vaultId, expectedBlobId: blobId)
seen = 0
try reader.stream { seen += UInt64($0.count) }
let unsealFileSeconds = now() - t0
precondition(seen == UInt64(total))

func mbps(_ s: Double) -> Double { Double(total) / s / 1e6 }
print("{\"what\":\"seal\",\"bytes\":\(total),\"segment\":\(segment),\"seconds\":\(sealSeconds),\"MBps\":\(mbps(sealSeconds)),\"backend\":\"\(AESGCMKey.backendName)\"}")
print("{\"what\":\"seal+sha256+write-to-ram\",\"bytes\":\(total),\"segment\":\(segment),\"seconds\":\(sealToFileSeconds),\"MBps\":\(mbps(sealToFileSeconds)),\"backend\":\"\(AESGCMKey.backendName)\"}")
print("{\"what\":\"unseal-from-file\",\"bytes\":\(total),\"segment\":\(segment),\"seconds\":\(unsealFileSeconds),\"MBps\":\(mbps(unsealFileSeconds)),\"backend\":\"\(AESGCMKey.backendName)\"}")
print("{\"what\":\"unseal\",\"bytes\":\(total),\"segment\":\(segment),\"seconds\":\(unsealSeconds),\"MBps\":\(mbps(unsealSeconds)),\"backend\":\"\(AESGCMKey.backendName)\"}")
