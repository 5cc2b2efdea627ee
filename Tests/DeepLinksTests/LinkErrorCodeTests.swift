import Testing
import DeepLinks

@Suite struct LinkErrorCodeTests {
    /// The codes are a public contract: this list changes only by adding.
    @Test func codesAreStable() {
        #expect(LinkErrorCode.allCases.map(\.rawValue) == [
            "tooLong", "malformed", "schemeNotAllowed", "hostNotAllowed", "userInfoNotAllowed",
            "portNotAllowed", "fragmentNotAllowed", "forbiddenCharacter", "invalidPercentEncoding",
            "dotSegment", "emptySegment", "trailingSlash", "tooManyPathSegments", "tooManyQueryItems",
            "unknownQueryParameter", "duplicateQueryParameter", "credentialInQuery", "invalidParameter",
            "noMatchingRoute",
        ])
    }
}
