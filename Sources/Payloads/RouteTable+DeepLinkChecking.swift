import DeepLinks

/// The route table is the production link checker.
extension RouteTable: DeepLinkChecking {}
