import CurlClient

extension TransportSettings {
    /// The transport's settings from the `apns` configuration.
    public init(_ configuration: APNsConfiguration) {
        self.init(baseURL: configuration.baseURL, caFile: configuration.caFile, connections: configuration.connections,
                  maxConcurrentStreams: configuration.maxConcurrentStreams,
                  timeoutMilliseconds: Int(configuration.requestTimeoutSeconds * 1000), threads: configuration.transportThreads)
    }
}
