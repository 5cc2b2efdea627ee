#if canImport(Glibc)
import Glibc
#endif

// Entry point: pick the command, run it, exit with its status.
// Exit statuses across every command: 0 success, 1 findings/rejections, 2 usage or
// configuration error.
signal(SIGPIPE, SIG_IGN)
let status = CommandRegistry.run(Array(CommandLine.arguments.dropFirst()))
Output.flush()
exit(status)
