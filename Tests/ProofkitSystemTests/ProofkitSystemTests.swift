import Foundation
import ProofkitCore
import TestSupport
import Testing

@testable import ProofkitSystem

// The libc chokepoint checked against the kernel's own files and Foundation's readers.

@Suite("ProofkitSystem: capped reads, mapping, errno kept", .offThePool)
struct CappedReadTests {

    @Test("a regular file over 64 KiB reads and maps to Foundation's bytes")
    func regularFile() throws {
        let path = TestEnvironment.fixture("speech_en_ljspeech_16k.wav")
        let reference = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(reference.count > 1 << 16)
        #expect(try POSIX.readWhole(path, limit: reference.count) == reference)
        let mapped = try POSIX.map(path)
        withExtendedLifetime(mapped) { #expect(Array(mapped.bytes) == reference) }
        #expect(try POSIX.readWhole(path, limit: 1 << 30) == reference)
    }

    @Test("a /proc file (size 0 by fstat) is read to its end")
    func procFile() throws {
        let status = try POSIX.status("/proc/self/status").get()
        #expect(status.size == 0)
        let text = String(decoding: try POSIX.readWhole("/proc/self/status", limit: 1 << 20), as: UTF8.self)
        #expect(text.hasPrefix("Name:"))
        #expect(text.contains("\nPid:"))
    }

    @Test("endless and size-0 files are refused at the cap, while reading")
    func endless() throws {
        for path in ["/dev/zero", "/proc/self/pagemap"] where FileManager.default.fileExists(atPath: path) {
            #expect {
                _ = try POSIX.readWhole(path, limit: 100_000)
            } throws: { error in
                if case .overLimit(size: nil) = error as? ReadFailure { return true }
                return false
            }
        }
        let path = TestEnvironment.fixture("speech_en_ljspeech_16k.wav")
        #expect {
            _ = try POSIX.readWhole(path, limit: 1000)
        } throws: { error in
            if case .overLimit(size: .some(let size)) = error as? ReadFailure {
                return size == (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int).map(Int64.init)
            }
            return false
        }
    }

    @Test("missing, folder and unopenable paths keep their errno and exit codes")
    func failures() throws {
        try withTemporaryFolder { folder throws in
            #expect(throws: ProofkitError.self) {
                try BoundedFile.read("\(folder)/absent", limit: 10, what: "state file")
            }
            do throws(ProofkitError) {
                _ = try BoundedFile.read("\(folder)/absent", limit: 10, what: "state file")
            } catch {
                #expect(error.code == .notFound && error.underlying == ENOENT)
            }
            do throws(ProofkitError) {
                _ = try BoundedFile.read(folder, limit: 10, what: "state file")
            } catch {
                #expect(error.code == .notFound && error.message == "is a folder, not a state file")
            }
            // A Unix socket cannot be opened (ENXIO): an I/O error with that errno, not "no such file".
            let socket = "\(folder)/control.sock"
            let made = try runProcess(
                "/usr/bin/python3",
                ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", socket])
            try #require(made.status == 0, "python3 could not make a socket")
            do throws(ProofkitError) {
                _ = try BoundedFile.read(socket, limit: 10, what: "state file")
                Issue.record("a socket was read")
            } catch {
                #expect(error.code == .io && error.underlying == ENXIO)
                #expect(error.message.hasPrefix("cannot open the state file: "))
            }
            // Not as root (root may open anything): a file without read permission is EACCES, an I/O error.
            if POSIX.effectiveUser != 0 {
                let locked = "\(folder)/locked"
                try Data("x".utf8).write(to: URL(fileURLWithPath: locked))
                _ = chmod(locked, 0)
                do throws(ProofkitError) {
                    _ = try BoundedFile.read(locked, limit: 10, what: "state file")
                } catch {
                    #expect(error.code == .io && error.underlying == EACCES)
                }
            }
        }
    }

    @Test("the atomic write keeps the mode, refuses a FIFO, and leaves no temporary")
    func atomicWrite() throws {
        try withTemporaryFolder { folder in
            let path = "\(folder)/out.json"
            try Data("old".utf8).write(to: URL(fileURLWithPath: path))
            _ = chmod(path, 0o640)
            try AtomicFile.write(Array("new".utf8), to: path)
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
            #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o640)
            let fifo = "\(folder)/fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            #expect {
                try AtomicFile.write(Array("x".utf8), to: fifo)
            } throws: { error in
                (error as? ProofkitError)?.message == "is not a regular file (it is a FIFO); refusing to replace it"
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["fifo", "out.json"])
            #expect(POSIX.sameFile(path, "\(folder)/./out.json"))
            #expect(!POSIX.sameFile(path, fifo))
        }
    }

    @Test(
        "stale temporaries of the output's own naming are removed, also for a name that is not UTF-8; fresh, other and misnamed ones stay"
    )
    func staleTemporaries() throws {
        try withTemporaryFolder { folder throws in
            // The output "o\xE9.caf" (Latin-1 é), kept in a String as FilePath escapes it.
            let nameBytes: [UInt8] = Array("o".utf8) + [0xE9] + Array(".caf".utf8)
            let output = "\(folder)/" + FilePath.string(fromBytes: nameBytes)
            func temporary(_ base: [UInt8], _ suffix: String) -> [CChar] {
                FilePath.cString("\(folder)/").dropLast()
                    + ([0x2E] + base + Array(".tmp-\(suffix)".utf8) + [0]).map {
                        CChar(bitPattern: $0)
                    }
            }
            let stale = temporary(nameBytes, "AbC123")
            let fresh = temporary(nameBytes, "XyZ789")
            let tooLong = temporary(nameBytes, "AbC1234")
            let other = temporary(Array("x.caf".utf8), "AbC123")
            let now = POSIX.now
            for (path, age) in [(stale, 600), (fresh, 10), (tooLong, 600), (other, 600)] {
                let fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0o600)
                #expect(fd >= 0)
                close(fd)
                var times = [timespec(tv_sec: now - age, tv_nsec: 0), timespec(tv_sec: now - age, tv_nsec: 0)]
                #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            }
            // Many unrelated entries, as in a busy output folder.
            for index in 0..<50 {
                #expect(FileManager.default.createFile(atPath: "\(folder)/f\(index).caf", contents: nil))
            }
            POSIX.removeStaleTemporaries(beside: output)
            #expect(access(stale, F_OK) != 0, "the stale temporary of the non-UTF-8 name is still there")
            #expect(access(fresh, F_OK) == 0, "a fresh temporary (maybe a running writer's) was removed")
            #expect(access(tooLong, F_OK) == 0, "a name that is not of our pattern was removed")
            #expect(access(other, F_OK) == 0, "another output's temporary was removed")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).count == 53)
        }
    }

    @Test("a scratch file is 0600 and close-on-exec temporaries are not inherited")
    func scratch() throws {
        try withTemporaryFolder { folder in
            let made = try ScratchFile.write(Array("abc".utf8), beside: "\(folder)/x.wav")
            #expect(try Data(contentsOf: URL(fileURLWithPath: made)) == Data("abc".utf8))
            #expect((try FileManager.default.attributesOfItem(atPath: made)[.posixPermissions] as? Int) == 0o600)
            ScratchFile.remove(made)
            #expect(!FileManager.default.fileExists(atPath: made))
            // A temporary held open while a child runs does not appear among the child's descriptors.
            let (fd, temporary) = try POSIX.makeTemporary(beside: "\(folder)/y").get()
            defer {
                POSIX.closeDescriptor(fd)
                POSIX.remove(temporary)
            }
            let listing = try ChildProcess.run(
                "/bin/ls", arguments: ["-l", "/proc/self/fd/"], stdout: true, stderr: false)
            #expect(!String(decoding: listing.stdout, as: UTF8.self).contains(temporary))
        }
    }

    @Test("a child gets only its three standard streams, even a descriptor made without close-on-exec")
    func onlyStandardStreamsInherited() throws {
        // A plain pipe(2) (as Foundation's Pipe and some C libraries make them): before, its write
        // end lived on in every child spawned meanwhile, so the pipe's reader saw no end-of-file
        // until that child ended.
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { for fd in ends { close(fd) } }
        #expect(fcntl(ends[1], F_GETFD) & FD_CLOEXEC == 0)
        let listing = try ChildProcess.run("/bin/ls", arguments: ["/proc/self/fd/"], stdout: true, stderr: false)
        let open = String(decoding: listing.stdout, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
        // ls itself holds one more: the folder it lists.
        #expect(Set(open).isSuperset(of: [0, 1, 2]) && open.count == 4, "\(open)")
        #expect(!open.contains(ends[0]) && !open.contains(ends[1]), "\(open) holds \(ends)")
    }

    @Test(
        "file kinds agree with Foundation's and stat(1)'s (a link named as one); /dev/null, a FIFO and a file are no input device (EVIOCGVERSION)"
    )
    func kindsAndInputDevices() throws {
        try withTemporaryFolder { folder in
            let fifo = folder + "/keys"
            let file = folder + "/keys.txt"
            #expect(mkfifo(fifo, 0o600) == 0)
            try Data([1, 2, 3]).write(to: URL(fileURLWithPath: file))
            for (path, type) in [
                (fifo, FileAttributeType.typeUnknown), ("/dev/null", .typeCharacterSpecial), (file, .typeRegular),
                (folder, .typeDirectory),
            ] {
                let status = try POSIX.status(path).get()
                let foundation = try FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType
                // Foundation has no FIFO type on Linux: it reports typeUnknown for one.
                #expect(foundation == type, "\(path)")
                #expect(status.isFIFO == (path == fifo) && status.isCharacterDevice == (path == "/dev/null"), "\(path)")
                if path == folder { continue }
                let fd = try POSIX.open(path, [.readOnly, .nonBlocking]).get()
                #expect(!WakeUp.isInputDevice(fd), "\(path)")
                POSIX.closeDescriptor(fd)
            }
            // The kinds named in messages, against the file types stat(1) names.
            let link = folder + "/link"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file)
            let named = [
                (fifo, "a FIFO", "fifo"), ("/dev/null", "a character device", "character special file"),
                (file, "a regular file", "regular file"), (folder, "a folder", "directory"),
                (link, "a symbolic link", "symbolic link"),
            ]
            for (path, kind, statName) in named {
                let status = try POSIX.linkStatus(path).get()
                #expect(status.kind == kind && status.isSymbolicLink == (path == link), "\(path)")
                let stat = try runProcess("/usr/bin/stat", ["-c", "%F", path]).stdout
                #expect(stat.trimmingCharacters(in: .whitespacesAndNewlines) == statName, "\(path): \(stat)")
            }
        }
    }
}

@Suite("ProofkitSystem: reading lines through one bounded buffer")
struct LineReaderTests {
    /// The lines `forEachLine` gives for `bytes` written into a file (each as text), or its failure.
    static func lines(
        of bytes: [UInt8], maximumLineLength: Int, skipsLongLines: Bool = false, chunk: Int
    ) throws -> (lines: [String], failure: LineReadFailure?) {
        return try withTemporaryFolder { folder in
            let path = folder + "/lines.txt"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let fd = try POSIX.open(path, .readOnly).get()
            defer { POSIX.closeDescriptor(fd) }
            var lines: [String] = []
            do {
                try POSIX.forEachLine(
                    fd, maximumLineLength: maximumLineLength, skipsLongLines: skipsLongLines, chunk: chunk
                ) {
                    line in lines.append(String(decoding: line, as: UTF8.self))
                }
                return (lines, nil)
            } catch let failure as LineReadFailure {
                return (lines, failure)
            }
        }
    }

    @Test("any chunk size gives Foundation's split, empty lines and a last line without a newline included")
    func splitsLikeFoundation() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let lineCount = Int.random(in: 0...40, using: &generator)
            var text = (0..<lineCount).map { _ in
                String((0..<Int.random(in: 0...90, using: &generator)).map { _ in "abcé ,:{}0".randomElement()! })
            }.joined(separator: "\n")
            if Bool.random(using: &generator) { text += "\n" }
            var expected = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if text.hasSuffix("\n") || text.isEmpty { expected.removeLast() }
            for chunk in [1, 3, 7, 64, 1 << 16] {
                let result = try Self.lines(of: Array(text.utf8), maximumLineLength: 200, chunk: chunk)
                #expect(result.failure == nil)
                #expect(result.lines == expected, "chunk \(chunk)")
            }
        }
    }

    @Test("a line over the cap stops the reading and is named by its number; skipping drops it and reads on")
    func longLine() throws {
        let text = Array("first\nsecond\n".utf8) + [UInt8](repeating: 0x41, count: 5000) + Array("\nlast\n".utf8)
        let failed = try Self.lines(of: text, maximumLineLength: 1000, chunk: 256)
        #expect(failed.lines == ["first", "second"])
        guard case .lineTooLong(let number)? = failed.failure else {
            Issue.record("expected lineTooLong, got \(String(describing: failed.failure))")
            return
        }
        #expect(number == 3)
        let skipped = try Self.lines(of: text, maximumLineLength: 1000, skipsLongLines: true, chunk: 256)
        #expect(skipped.failure == nil)
        #expect(skipped.lines == ["first", "second", "last"])
        // An endless last line without a newline is dropped too, never handed over in pieces.
        let endless = Array("a\n".utf8) + [UInt8](repeating: 0x42, count: 5000)
        #expect(try Self.lines(of: endless, maximumLineLength: 1000, skipsLongLines: true, chunk: 256).lines == ["a"])
    }

    @Test("a read error is reported with its errno")
    func readError() throws {
        var thrown: LineReadFailure?
        do {
            try POSIX.forEachLine(-1, maximumLineLength: 16) { _ in }
        } catch let failure as LineReadFailure {
            thrown = failure
        }
        guard case .read(let errno)? = thrown else {
            Issue.record("expected a read failure, got \(String(describing: thrown))")
            return
        }
        #expect(errno.code == EBADF)
    }
}
