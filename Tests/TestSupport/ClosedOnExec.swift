import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Pipe {
    /// A pipe whose two descriptors are closed in every child that does not take them as
    /// its stdin/stdout/stderr. Tests start processes concurrently: without this, a server
    /// started by one test inherits another test's output pipe, and that test's read to
    /// end-of-file waits for the unrelated server to exit (two such tests deadlock).
    public static func closedOnExec() -> Pipe {
        let pipe = Pipe()
        _ = fcntl(pipe.fileHandleForReading.fileDescriptor, F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipe.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
        return pipe
    }
}
