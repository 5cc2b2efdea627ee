import Outbox
import Testing

/// Where the campaigns are, as messages show it: a database URL never shows its password.
@Suite struct StorageLocationRedactionTests {
    @Test(arguments: [
        ("postgresql://pushgate:s3cret@db.internal:5432/pushgate", "postgresql://pushgate:(redacted)@db.internal:5432/pushgate"),
        ("postgres://u:p:q@host/db?sslmode=require", "postgres://u:(redacted)@host/db?sslmode=require"),
        ("postgresql://a:b@c:d@host/db", "postgresql://a:(redacted)@host/db"),  // the last '@' of the authority ends the user part
        ("postgresql://pushgate@host/db", "postgresql://pushgate@host/db"),  // no password
        ("postgresql://host/db?user=a@b:c", "postgresql://host/db?user=a@b:c"),  // '@' outside the authority
        ("host=db user=pushgate", "host=db user=pushgate"),  // not a URL
        ("a:b:/x://u:p@h/", "a:b:/x://u:(redacted)@h/"),  // the first "://" starts the authority
    ])
    func passwordsAreRedacted(url: String, shown: String) {
        #expect(DurableSettings.Storage.redacted(url) == shown)
    }
}
