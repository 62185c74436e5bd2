// The kinds of file a `POSIX.FileStatus` describes, by the Linux (and Darwin) `S_IFMT` values: no
// libc here.

extension POSIX.FileStatus {
    /// Whether this is a FIFO (a named pipe): `S_IFIFO`, 0o010000 on Linux (and Darwin).
    package var isFIFO: Bool { type == 0o010000 }
    /// Whether this is a character device (`/dev/input/event0`, `/dev/null`, a terminal...):
    /// `S_IFCHR`, 0o020000.
    package var isCharacterDevice: Bool { type == 0o020000 }
    /// Whether this is a symbolic link (from ``POSIX/linkStatus(_:)``): `S_IFLNK`, 0o120000.
    package var isSymbolicLink: Bool { type == 0o120000 }

    /// "a folder", "a FIFO"...: what a file that is not regular is, for messages.
    package var kind: String {
        switch type {
        case 0o100000: "a regular file"
        case 0o040000: "a folder"
        case 0o020000: "a character device"
        case 0o060000: "a block device"
        case 0o010000: "a FIFO"
        case 0o140000: "a socket"
        case 0o120000: "a symbolic link"
        default: "special"
        }
    }
}
