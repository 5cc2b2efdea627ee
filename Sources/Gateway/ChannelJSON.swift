import APNs
import StrictJSON

/// The one JSON shape of a channel management answer, for `pushgate channels --json` and
/// `/v1/channels`: the app, the environment, Apple's request id, and the channel(s).
public enum ChannelJSON {
    public static func render(_ answer: ChannelAnswer, app: String, environment: APNsEnvironment, requestId: String?) -> [UInt8] {
        var w = JSONWriter()
        w.object { w in
            w.member("app", app)
            w.member("environment", environment.rawValue)
            switch answer {
            case .created(let channel), .channel(let channel):
                w.member("channel_id", channel.id)
                w.member("message_storage_policy", orNull: channel.storagePolicy?.rawValue)
                w.member("push_type", orNull: channel.pushType)
            case .channels(let ids):
                w.member("channels", array: { w in for id in ids { w.value(.string(id)) } })
            case .deleted(let id):
                w.member("channel_id", id)
                w.member("deleted", true)
            }
            w.member("request_id", orNull: requestId)
        }
        w.raw("\n")
        return w.bytes
    }

    /// One line per channel for people: `ID  POLICY  PUSH TYPE`, or the ids of a list.
    public static func text(_ answer: ChannelAnswer, app: String, environment: APNsEnvironment) -> String {
        switch answer {
        case .created(let channel):
            return "created channel \(channel.id) for \(app) (\(environment.rawValue)): message-storage-policy \(channel.storagePolicy.map { "\($0.rawValue) (\($0.name))" } ?? "?")\n"
        case .channel(let channel):
            return "channel \(channel.id) of \(app) (\(environment.rawValue)): message-storage-policy \(channel.storagePolicy.map { "\($0.rawValue) (\($0.name))" } ?? "?"), push type \(channel.pushType ?? "?")\n"
        case .channels(let ids):
            return ids.isEmpty ? "no channels for \(app) (\(environment.rawValue))\n" : ids.joined(separator: "\n") + "\n"
        case .deleted(let id):
            return "deleted channel \(id) of \(app) (\(environment.rawValue))\n"
        }
    }
}
