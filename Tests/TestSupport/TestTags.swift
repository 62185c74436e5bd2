public import Testing

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Tag {
    /// Property runs over thousands of seeded random cases (the planner's properties, damaged pose
    /// lines, number formatting against printf): the slowest CPU-bound tests. `.ci/test` runs them
    /// once with everything else; a quick local run leaves them out with
    /// `PROOFKIT_SKIP_PROPERTY_TESTS=1 swift test --skip-build`.
    @Tag public static var property: Self
}

extension TestEnvironment {
    /// Whether the ``Testing/Tag/property`` runs run: unless `PROOFKIT_SKIP_PROPERTY_TESTS` is set.
    public static let runsPropertyTests = ProcessInfo.processInfo.environment["PROOFKIT_SKIP_PROPERTY_TESTS"] == nil
}

extension Trait where Self == ConditionTrait {
    /// Tags a property run and lets a quick run skip it (see ``Testing/Tag/property``).
    public static var propertyRun: ConditionTrait {
        .enabled(if: TestEnvironment.runsPropertyTests, "PROOFKIT_SKIP_PROPERTY_TESTS is set: property runs skipped")
    }
}
