import ProofkitCLI
import ProofkitCore
import Testing

let sampleOptions: [OptionSpec] = [
    .flag("json", help: ""),
    .option("output", short: "o", value: "FILE", help: ""),
    .option("max-seconds", value: "S", help: ""),
    .option("prompt", value: "TEXT", repeatable: true, help: ""),
]

@Suite("Argument parsing")
struct ArgumentsTests {
    @Test("--name value and --name=value give the same result")
    func spaceAndEquals() throws {
        let a = try parseArguments(["in.mp3", "--output", "x.caf"], options: sampleOptions)
        let b = try parseArguments(["in.mp3", "--output=x.caf"], options: sampleOptions)
        let c = try parseArguments(["in.mp3", "-o", "x.caf"], options: sampleOptions)
        #expect(a == b && b == c)
        #expect(a.value("output") == "x.caf")
        #expect(a.positionals == ["in.mp3"])
    }

    @Test("flags are recorded and --flag=value is refused")
    func flags() throws {
        let parsed = try parseArguments(["--json", "a"], options: sampleOptions)
        #expect(parsed.has("json"))
        #expect(!parsed.has("output"))
        #expect(throws: UsageError("--json does not take a value")) {
            try parseArguments(["--json=yes"], options: sampleOptions)
        }
    }

    @Test("unknown options are errors, never ignored", arguments: ["--bogus", "-x", "--Json"])
    func unknownOptions(token: String) {
        #expect(throws: UsageError.self) { try parseArguments([token], options: sampleOptions) }
    }

    @Test("everything after -- is positional, including dashes")
    func doubleDash() throws {
        let parsed = try parseArguments(["--json", "--", "--output", "-weird.mp3"], options: sampleOptions)
        #expect(parsed.positionals == ["--output", "-weird.mp3"])
        #expect(parsed.value("output") == nil)
    }

    @Test("a lone dash and negative numbers are positional")
    func dashAndNegative() throws {
        let parsed = try parseArguments(["-", "-0.12", "-5"], options: sampleOptions)
        #expect(parsed.positionals == ["-", "-0.12", "-5"])
    }

    @Test("an option's value may look like a negative number")
    func negativeValue() throws {
        let parsed = try parseArguments(["--max-seconds", "-3"], options: sampleOptions)
        #expect(parsed.value("max-seconds") == "-3")
    }

    @Test("a missing value is a usage error")
    func missingValue() {
        #expect(throws: UsageError("--output needs a value")) {
            try parseArguments(["--output"], options: sampleOptions)
        }
    }

    @Test("repeatable options accumulate; single options keep the last")
    func repeats() throws {
        let parsed = try parseArguments(
            ["--prompt", "a", "--prompt=b", "-o", "1", "-o", "2"], options: sampleOptions)
        #expect(parsed.all("prompt") == ["a", "b"])
        #expect(parsed.value("output") == "2")
    }

    @Test("numbers and durations parse with clear errors")
    func numbersAndDurations() throws {
        let parsed = try parseArguments(["--max-seconds", "12.5"], options: sampleOptions)
        #expect(try parsed.double("max-seconds") == 12.5)
        let bad = try parseArguments(["--max-seconds", "abc"], options: sampleOptions)
        #expect(throws: UsageError.self) { try bad.double("max-seconds") }
        #expect(throws: UsageError.self) { try bad.int("max-seconds") }
        #expect(parseDuration("500ms") == 0.5)
        #expect(parseDuration("10m") == 600)
        #expect(parseDuration("2h") == 7200)
        #expect(parseDuration("29") == 29)
        #expect(parseDuration("1.5s") == 1.5)
        #expect(parseDuration("-1s") == nil)
        #expect(parseDuration("soon") == nil)
        // Compound durations (issue 34: `trim --start 1m30s`, the help's own example, exited 64).
        #expect(parseDuration("1m30s") == 90)
        #expect(parseDuration("1h2m") == 3720)
        #expect(parseDuration("1h30m15s") == 5415)
        #expect(parseDuration("2s500ms") == 2.5)
        #expect(parseDuration("1m0.5s") == 60.5)
        for malformed in ["30s1m", "1m1m", "1m30", "m", "1x", "1m-5s", "", "1 m", "ms", "1.2.3s", "infs"] {
            #expect(parseDuration(malformed) == nil, "\(malformed)")
        }
    }

    @Test("requirePositionals names what is missing or extra")
    func positionalCount() throws {
        let parsed = try parseArguments(["a", "b"], options: sampleOptions)
        #expect(throws: UsageError("unexpected argument 'b'")) {
            try parsed.requirePositionals(1, names: "INPUT")
        }
        #expect(throws: UsageError("missing INPUT and OUTPUT")) {
            try ParsedArguments().requirePositionals(2, names: "INPUT and OUTPUT")
        }
    }
}

@Suite("Options whose value may be left out")
struct OptionalValueTests {
    static let options: [OptionSpec] = [
        .optionalValue("camera", value: "DEVICE", help: "a camera"), .option("max-seconds", value: "S", help: "s"),
        .flag("json", help: "json"),
    ]

    @Test("--camera alone, before another option, with a device, or =DEVICE")
    func forms() throws {
        #expect(try parseArguments(["--camera"], options: Self.options).value("camera") == "")
        #expect(try parseArguments(["--json", "--camera"], options: Self.options).value("camera") == "")
        let before = try parseArguments(["--camera", "--json"], options: Self.options)
        #expect(before.value("camera") == "" && before.has("json"))
        let device = try parseArguments(["--camera", "/dev/video2", "--max-seconds", "5"], options: Self.options)
        #expect(device.value("camera") == "/dev/video2" && device.value("max-seconds") == "5")
        #expect(try parseArguments(["--camera=/dev/video1"], options: Self.options).value("camera") == "/dev/video1")
        #expect(try parseArguments(["--json"], options: Self.options).value("camera") == nil)
        // A lone "-" (stdin, as in `alarm prove --squat -`) is a value.
        #expect(try parseArguments(["--camera", "-"], options: Self.options).value("camera") == "-")
    }
}

@Suite("Exit status table")
struct ExitStatusTests {
    @Test(
        "each error code maps to its documented exit status",
        arguments: [
            (ProofkitError.Code.invalidArgument, Int32(64)), (.notFound, 66), (.unsupportedFormat, 65),
            (.decodeFailed, 65), (.deviceUnavailable, 69), (.runtimeUnavailable, 69), (.io, 74),
            (.modelInvalid, 78), (.internal, 1), (.cameraBusy, 80), (.cameraUnplugged, 81), (.cameraStalled, 82),
            (.notACamera, 83), (.cameraFormat, 84),
        ])
    func mapping(code: ProofkitError.Code, status: Int32) {
        #expect(ExitStatus(for: code).rawValue == status)
    }
}

@Suite("JSON output")
struct JSONValueTests {
    @Test("keys are sorted and strings escaped")
    func serialisation() {
        let value: JSONValue = ["b": 1, "a": "x\"y\n\u{1}", "c": [true, nil, 1.5]]
        #expect(value.serialized == #"{"a":"x\"y\n\u0001","b":1,"c":[true,null,1.5]}"#)
    }

    @Test("non-finite numbers become null; whole doubles print without a fraction")
    func numbers() {
        #expect(JSONValue.number(.nan).serialized == "null")
        #expect(JSONValue.number(3).serialized == "3")
        #expect(JSONValue.rounded(0.123456, places: 3).serialized == "0.123")
    }

    @Test("Arabic text passes through unescaped")
    func arabic() {
        #expect(JSONValue.string("الحمد لله").serialized == "\"الحمد لله\"")
    }

    @Test("the parsed arguments know the declared names; asking for a declared but absent one is nil")
    func declaredNames() throws {
        let parsed = try parseArguments(["--json"], options: sampleOptions)
        #expect(parsed.declaredNames == ["json", "output", "max-seconds", "prompt"])
        #expect(parsed.value("max-seconds") == nil && parsed.all("prompt").isEmpty && !parsed.has("output"))
    }
}
