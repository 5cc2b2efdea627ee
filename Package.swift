// swift-tools-version:6.0
import PackageDescription

// pushgate: push-notification gateway for iOS apps.
// No Swift package dependencies: C libraries come from Debian through pkg-config.
let package = Package(
    name: "pushgate",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "pushgate", targets: ["pushgate"]),
    ],
    targets: [
        // C libraries from Debian (-dev packages), found with pkg-config.
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),
        // One shim per C library: typed wrappers for what Swift cannot call directly
        // (variadic functions, struct layouts). Each is imported by its owner only
        // (docs/architecture.md; scripts/check-architecture.py).
        .target(name: "CCurlShims", dependencies: ["CCurl"]),
        .target(name: "CMicroHTTPDShims", dependencies: ["CMicroHTTPD"]),
        .target(name: "CLinuxShims"),

        // Pure logic: no C, no I/O.
        .target(name: "StrictJSON"),
        // The one clock (wall and monotonic, injectable) and the one backoff.
        .target(name: "Timing"),
        // Detached POSIX threads for the long-running loops (no Foundation in the binary).
        .target(name: "OSThreads"),
        // Commands as data: declared options, their parser, the generated usage.
        .target(name: "OptionTable", dependencies: ["StrictJSON"]),
        // The only module that imports OpenSSL: P-256 keys, ES256, SHA-256, HMAC, constant-time comparison.
        .target(name: "Crypto", dependencies: ["COpenSSL", "StrictJSON"]),
        .target(name: "DeepLinks", dependencies: ["StrictJSON", "Crypto"]),
        // The APNs concepts with no C and no I/O: push types, the typed request, Apple's
        // reasons, a device's result (and the transport's failure codes), the retry policy.
        .target(name: "APNsCore", dependencies: ["StrictJSON", "Timing"]),
        .target(name: "Payloads", dependencies: ["DeepLinks", "APNsCore", "StrictJSON", "Timing"]),
        // The app's half of the route table: the Swift router generator. It embeds the link
        // engine's sources (Sources/DeepLinks/Engine, TextSafety) at build time.
        .target(name: "Codegen", dependencies: ["DeepLinks", "StrictJSON"], plugins: ["EmbedLinkEngine"]),
        .executableTarget(name: "EmbedSources"),
        .plugin(name: "EmbedLinkEngine", capability: .buildTool(), dependencies: ["EmbedSources"]),
        // The `/ui` preview page: HTML, CSS and JavaScript embedded at build time.
        .target(name: "PreviewPage", exclude: ["Assets"], plugins: ["EmbedPageAssets"]),
        .plugin(name: "EmbedPageAssets", capability: .buildTool(), dependencies: ["EmbedSources"]),

        // Talks to Apple.
        // Release builds skip the run-time exclusivity checks here: the transport thread's
        // per-request bookkeeping paid ~1,100 instructions a request for them (callgrind,
        // `make bench`'s apns). Debug builds, which the tests run, keep them.
        // The only module that imports libcurl: the HTTP/2 multiplexer and one blocking request.
        // Same release setting as APNs, for the same per-request bookkeeping.
        .target(name: "CurlClient", dependencies: ["CCurl", "CCurlShims", "APNsCore", "Timing", "OSThreads"],
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        .target(name: "APNs", dependencies: ["APNsCore", "Payloads", "DeepLinks", "StrictJSON", "Timing", "Crypto", "CurlClient"],
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),

        // The HTTP/1.1 server the service runs on.
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "CMicroHTTPDShims", "CLinuxShims", "StrictJSON", "Timing", "OSThreads"]),
        // Durable campaigns: the SQLite outbox behind a storage protocol.
        .target(name: "Storage", dependencies: ["CSQLite", "StrictJSON", "Timing"]),
        // The same storage contract in PostgreSQL (libpq), for several instances sharing one database.
        .target(name: "PostgresStorage", dependencies: ["Storage", "CLibPQ", "Timing"]),
        // The outbox: intake, dispatcher, webhooks, retention. Knows nothing of HTTP serving.
        .target(name: "Outbox", dependencies: ["Storage", "APNsCore", "Payloads", "APNs", "StrictJSON", "Timing", "OSThreads", "Crypto", "CurlClient"]),
        // The service's API: endpoints, auth, limits, metrics, OpenAPI.
        .target(name: "Gateway", dependencies: ["HTTPServer", "OSThreads", "DeepLinks", "Payloads", "APNs", "StrictJSON", "Crypto", "Storage", "Timing", "PreviewPage", "Outbox"]),

        .executableTarget(name: "pushgate", dependencies: ["OptionTable", "Codegen", "DeepLinks", "APNsCore", "Payloads", "APNs", "Crypto", "CurlClient", "StrictJSON", "Gateway", "HTTPServer", "Storage", "PostgresStorage", "Timing", "Outbox"]),

        .executableTarget(name: "PushgateBench", dependencies: ["DeepLinks", "APNsCore", "Payloads", "APNs", "Crypto", "CurlClient", "StrictJSON", "Storage", "PostgresStorage", "Timing"],
                          path: "Benchmarks/PushgateBench"),

        .testTarget(name: "StrictJSONTests", dependencies: ["StrictJSON", "DeepLinks"]),
        .testTarget(name: "OptionTableTests", dependencies: ["OptionTable"]),
        .testTarget(name: "TimingTests", dependencies: ["Timing", "TestSupport"]),
        .testTarget(name: "OSThreadsTests", dependencies: ["OSThreads"]),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "COpenSSL"]),
        .testTarget(name: "DeepLinksTests", dependencies: ["DeepLinks", "StrictJSON"]),
        .testTarget(name: "PayloadsTests", dependencies: ["APNsCore", "Payloads", "DeepLinks", "StrictJSON", "Timing", "TestSupport"], exclude: ["Goldens"]),
        .testTarget(name: "APNsTests", dependencies: ["APNs", "APNsCore", "Crypto", "CurlClient", "Payloads", "StrictJSON", "Timing", "TestSupport"], exclude: ["Fixtures"]),
        .target(name: "TestSupport", dependencies: ["StrictJSON", "Timing", "Storage", "HTTPServer"], path: "Tests/TestSupport"),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "CLinuxShims", "Timing", "TestSupport"]),
        .testTarget(name: "GatewayTests", dependencies: ["Gateway", "APNsCore", "Crypto", "CurlClient", "HTTPServer", "StrictJSON", "DeepLinks", "Payloads", "APNs", "TestSupport", "Storage", "PostgresStorage", "Timing", "Outbox"]),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "PostgresStorage", "Timing", "TestSupport", "StrictJSON"], exclude: ["Fixtures"]),
        .testTarget(name: "CodegenTests", dependencies: ["Codegen", "DeepLinks", "StrictJSON", "TestSupport"]),
        .testTarget(name: "PushgateCLITests", dependencies: ["pushgate", "OptionTable", "Gateway", "StrictJSON", "TestSupport", "Storage", "PostgresStorage", "Timing"], exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
