import ProofkitCore

/// `value` rounded to `places` decimals, e.g. `decimalText(3.14159, places: 2) == "3.14"`, without
/// Foundation's `String(format:)`. Non-finite values give `"-"`. (ProofkitCore's
/// `Double.fixedDecimal(places:)`, under the name the facade's callers use.)
public func decimalText(_ value: Double, places: Int) -> String {
    value.fixedDecimal(places: places)
}
