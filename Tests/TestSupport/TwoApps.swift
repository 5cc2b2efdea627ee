/// Two apps with different bundle ids, teams, hosts, schemes and routes (and a third that
/// shares the shop's host and team), for the several-apps tests of every module.
public enum TwoApps {
    public static let shopRoutes = """
    {"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.example.shop", "scheme": "shop"},
     "hosts": ["example.com", "www.example.com"],
     "routes": [
       {"name": "product", "path": "/product/:id", "params": {"id": "int"}},
       {"name": "help", "path": "/help/*"}
     ]}
    """

    public static let newsRoutes = """
    {"app": {"teamId": "Z9Y8X7W6V5", "bundleId": "org.example.news", "scheme": "news"},
     "hosts": ["news.example.org"],
     "routes": [
       {"name": "article", "path": "/article/:slug", "params": {"slug": "slug"}}
     ]}
    """

    /// Same team and host as the shop, its own paths: both apps in one AASA file.
    public static let clubRoutes = """
    {"app": {"teamId": "A1B2C3D4E5", "bundleId": "com.example.club", "scheme": "club"},
     "hosts": ["example.com"],
     "routes": [
       {"name": "member", "path": "/club/member/:id", "params": {"id": "int"}}
     ]}
    """

    /// `gateway.json` for shop and news (dry run), with `extra` members added at the top.
    public static func gateway(extra: String = "") -> String {
        """
        {
          \(extra)
          "apps": {
            "shop": {"routes": "shop-routes.json"},
            "news": {"routes": "news-routes.json", "templates": "news-templates", "apns": {"teamId": "Z9Y8X7W6V5", "keyId": "NEWSKEY001"}}
          },
          "templates": "shop-templates",
          "apns": {"dryRun": true, "teamId": "A1B2C3D4E5", "keyId": "SHOPKEY001"},
          "storage": {"path": "pushgate.db"}
        }
        """
    }

    public static let alertCampaign = #"{"alert": {"body": "Hi"}, "deeplink": "https://example.com/product/42", "devices": ["\#(TestTokens.device)"]}"#
}
