import StrictJSON
/// `expiration`: UNIX seconds, or an RFC 3339 timestamp converted to them. APNs wants
/// whole seconds; fractions are dropped.
enum Expiration {
    /// Seconds since 1970 for `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`, or why not.
    static func parseRFC3339(_ text: String) -> Result<Int64, ValueProblem> {
        let b = Array(text.utf8)
        let expected = "expected an RFC 3339 timestamp like 2026-12-01T09:30:00Z"
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= b.count else { return nil }
            var v = 0
            for i in start..<(start + count) {
                guard b[i] >= 0x30 && b[i] <= 0x39 else { return nil }
                v = v * 10 + Int(b[i] - 0x30)
            }
            return v
        }
        func at(_ i: Int, _ c: Character) -> Bool { i < b.count && b[i] == c.asciiValue! }
        guard let year = digits(0, 4), at(4, "-"), let month = digits(5, 2), at(7, "-"),
              let day = digits(8, 2), at(10, "T") || at(10, "t") || at(10, " "),
              let hour = digits(11, 2), at(13, ":"), let minute = digits(14, 2), at(16, ":"),
              let second = digits(17, 2)
        else { return .failure(ValueProblem(expected)) }
        var i = 19
        if at(i, ".") {
            i += 1
            let start = i
            while i < b.count, b[i] >= 0x30 && b[i] <= 0x39 { i += 1 }
            if i == start { return .failure(ValueProblem(expected)) }
        }
        var offsetSeconds = 0
        if at(i, "Z") || at(i, "z") {
            i += 1
        } else if at(i, "+") || at(i, "-") {
            let sign = at(i, "-") ? -1 : 1
            guard let oh = digits(i + 1, 2), at(i + 3, ":"), let om = digits(i + 4, 2), oh < 24, om < 60 else {
                return .failure(ValueProblem(expected))
            }
            offsetSeconds = sign * (oh * 3600 + om * 60)
            i += 6
        } else {
            return .failure(ValueProblem(expected + " (the time zone is missing)"))
        }
        guard i == b.count else { return .failure(ValueProblem(expected)) }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour < 24, minute < 60, second <= 60
        else { return .failure(ValueProblem("not a real date and time: " + TextSafety.quoted(text))) }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + min(second, 59)) - Int64(offsetSeconds)
        return .success(seconds)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Howard Hinnant's days_from_civil: days since 1970-01-01 in the proleptic Gregorian calendar.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
