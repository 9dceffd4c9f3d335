#if BUS_LIBFUZZER
    import Foundation
    import FuzzTargets

    extension BusFuzz {
        /// The target the run fuzzes, set once by `LLVMFuzzerInitialize` before any input: the
        /// C entry points cannot capture.
        nonisolated(unsafe) static var selected: FuzzTarget?
    }

    /// libFuzzer calls this first, before it reads its flags: takes the target's name out of
    /// argv so libFuzzer does not read it as a corpus folder, and leaves it in
    /// `BUS_FUZZ_TARGET` for the processes libFuzzer starts with the remaining arguments
    /// (`-merge=1`, `-fork=N`).
    @_cdecl("LLVMFuzzerInitialize")
    func fuzzerInitialize(
        _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
    ) -> Int32 {
        guard let list = argv.pointee else { BusFuzz.fail(BusFuzz.usage, code: 64) }
        if argc.pointee >= 2, let name = list[1].map({ String(cString: $0) }), let target = FuzzTarget(rawValue: name) {
            BusFuzz.selected = target
            setenv("BUS_FUZZ_TARGET", name, 1)
            for index in 1..<Int(argc.pointee) { list[index] = list[index + 1] }
            argc.pointee -= 1
            return 0
        }
        guard let name = getenv("BUS_FUZZ_TARGET").map({ String(cString: $0) }), let target = FuzzTarget(rawValue: name) else {
            BusFuzz.fail(BusFuzz.usage, code: 64)
        }
        BusFuzz.selected = target
        return 0
    }

    /// One input: the selected target's real decoder.
    @_cdecl("LLVMFuzzerTestOneInput")
    func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
        BusFuzz.selected?.run(bytes)
        return 0
    }
#endif
