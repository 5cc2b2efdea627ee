import HTTPServer
import PreviewPage

/// `GET /ui` and its stylesheet and script: open like `/openapi.json` (the page holds no
/// data; every API call it makes carries the key the person enters).
enum PreviewPageEndpoints {
    static func register(in builder: inout APIRouterBuilder) {
        for asset in PreviewPage.assets {
            let response = HTTPResponse(status: 200, headers: [("Content-Type", asset.contentType)] + PreviewPage.headers,
                                        body: asset.body)
            builder.add("GET", asset.path, operation: "ui", public: true) { _, _ in response }
        }
    }
}
