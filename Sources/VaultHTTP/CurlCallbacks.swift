internal import CCurl
internal import CCurlShims

// C-convention trampolines for libcurl's callbacks. Each recovers its `TransferContext` from the
// user-data pointer (unretained: the context outlives the transfer) and never lets a Swift error
// cross into C.

let curlReadTrampoline: CCurlShims_read_cb = { buffer, size, nitems, userdata in
    guard let buffer, let userdata else { return CCurlShims_readfunc_abort() }
    let ctx = Unmanaged<TransferContext>.fromOpaque(userdata).takeUnretainedValue()
    let room = UnsafeMutableRawBufferPointer(start: buffer, count: size * nitems)
    guard let n = ctx.read(into: room) else { return CCurlShims_readfunc_abort() }
    return n
}

let curlWriteTrampoline: CCurlShims_write_cb = { data, size, nmemb, userdata in
    let count = size * nmemb
    guard let userdata else { return 0 }
    guard count > 0, let data else { return count }
    let ctx = Unmanaged<TransferContext>.fromOpaque(userdata).takeUnretainedValue()
    // Any value other than `count` makes libcurl stop with CURLE_WRITE_ERROR.
    return ctx.write(UnsafeRawBufferPointer(start: data, count: count)) ? count : 0
}

let curlHeaderTrampoline: CCurlShims_write_cb = { data, size, nmemb, userdata in
    let count = size * nmemb
    guard let userdata else { return 0 }
    guard count > 0, let data else { return count }
    let ctx = Unmanaged<TransferContext>.fromOpaque(userdata).takeUnretainedValue()
    return ctx.header(UnsafeRawBufferPointer(start: data, count: count)) ? count : 0
}

let curlProgressTrampoline: CCurlShims_xferinfo_cb = { userdata, _, dlnow, _, ulnow in
    guard let userdata else { return 1 }
    let ctx = Unmanaged<TransferContext>.fromOpaque(userdata).takeUnretainedValue()
    return ctx.progress(uploaded: Int64(ulnow), downloaded: Int64(dlnow)) ? 0 : 1
}
