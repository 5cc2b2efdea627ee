import Payloads
import Testing

/// Apple's priority 1 ("prioritize the device's power considerations over all other
/// factors for delivery, and prevent awakening the device") and its rules per push type;
/// MDM pushes, which Apple takes only with the MDM push certificate.
@Suite struct PriorityOneTests {
    let device = #""devices": ["\#(Fixtures.tokenA)"]"#

    @Test func anAlertMayGoAtPriorityOne() throws {
        let request = try Fixtures.firstRequest(#"{"alert": "Weekly digest", "priority": 1, \#(device)}"#)
        #expect(request.header("apns-priority") == "1")
        #expect(try Fixtures.firstRequest(#"{"alert": "x", "priority": 1, "interruption_level": "passive", \#(device)}"#).header("apns-priority") == "1")
    }

    @Test func priorityOneCannotCarryANotificationThatInterrupts() {
        #expect(Fixtures.codes(#"{"alert": "x", "priority": 1, "interruption_level": "time-sensitive", \#(device)}"#)
                == ["priority: priorityOneCannotInterrupt"])
        #expect(Fixtures.codes(#"{"alert": "x", "priority": 1, "interruption_level": "critical", \#(device)}"#)
                == ["priority: priorityOneCannotInterrupt"])
        #expect(Fixtures.codes(#"{"alert": "x", "priority": 1, "sound": {"critical": 1, "name": "default"}, \#(device)}"#)
                == ["priority: priorityOneCannotInterrupt"])
        // A template's time-sensitive default counts as well.
        #expect(Fixtures.codes(#"{"template": "order_ready", "priority": 1, "variables": {"order_id": "3f2504e0-4f89-41d3-9a0c-0305e82c3301", "store_name": "x"}, \#(device)}"#)
                == ["priority: priorityOneCannotInterrupt"])
    }

    @Test func pushTypesWithTheirOwnPrioritiesRefuseOne() {
        #expect(Fixtures.codes(#"{"push_type": "background", "priority": 1, \#(device)}"#) == ["priority: backgroundRequiresPriority5"])
        #expect(Fixtures.codes(#"{"live_activity": {"event": "update", "content_state": {"a": 1}}, "priority": 1, \#(device)}"#)
                == ["priority: liveActivityPriority"])
    }
}

@Suite struct MDMAuthenticationTests {
    let device = #""devices": ["\#(Fixtures.tokenA)"]"#

    @Test func tokenAuthenticationRefusesEveryMDMPush() {
        #expect(Fixtures.codes(#"{"mdm": "ABC", \#(device)}"#) == ["mdm: mdmRequiresCertificate"])
        let problems = Fixtures.problems(#"{"push_type": "mdm", "mdm": "ABC", \#(device)}"#)
        #expect(problems.map { "\($0.path): \($0.stableCode)" } == ["push_type: mdmRequiresCertificate"])
        #expect(problems.first?.message.contains("MDM push certificate") == true)
    }
}
