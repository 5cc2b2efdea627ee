import Testing
import StrictJSON

@Suite struct JSONPrettyPrinterTests {
    @Test func indentsNestedValuesInStoredOrder() throws {
        let json = try JSONParser().parse(#"{"b":[1,{"x":null}],"a":{},"c":[],"d":"q\"\u202e","e":true}"#)
        #expect(JSONWriter.pretty(json) == """
        {
          "b": [
            1,
            {
              "x": null
            }
          ],
          "a": {},
          "c": [],
          "d": "q\\"\\u202e",
          "e": true
        }

        """)
    }

    @Test func readsBackToTheSameValue() throws {
        let json = try JSONParser().parse(#"{"k":[{"a":[[]],"b":-1.5e3}],"s":"żółw"}"#)
        #expect(try JSONParser().parse(JSONWriter.pretty(json)) == json)
    }

    @Test func scalarsStayOnOneLine() {
        #expect(JSONWriter.pretty(.string("a")) == "\"a\"\n")
    }
}
