import Foundation
import PoseEstimation
import TestSupport

/// The Python reference's values as the engine's types (see TestSupport's `PoseFixtures`).
enum PoseReference {
    static func floats(base64 text: Any?) -> [Float] {
        guard let text = text as? String, let data = Data(base64Encoded: text) else { return [] }
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    static func detection(_ value: Any?) -> PoseDetection? {
        guard let object = value as? [String: Any] else { return nil }
        let box = PoseFixtures.numbers(object["box"])
        let keypoints = (object["keypoints"] as? [Any] ?? []).map(PoseFixtures.numbers).map {
            PosePoint(x: $0[0], y: $0[1])
        }
        return PoseDetection(
            score: PoseFixtures.number(object["score"]), anchor: Int(PoseFixtures.number(object["anchor"])),
            box: PoseBox(minX: box[0], minY: box[1], maxX: box[2], maxY: box[3]), keypoints: keypoints,
            mergedCount: Int(PoseFixtures.number(object["merged"])))
    }

    static func region(_ value: Any?) -> PoseRegion? {
        guard let object = value as? [String: Any] else { return nil }
        let n = PoseFixtures.number
        return PoseRegion(
            centerX: n(object["x_center"]), centerY: n(object["y_center"]), width: n(object["width"]),
            height: n(object["height"]), rotation: n(object["rotation"]))
    }
}

/// The largest |a - b| over two equally long lists (infinity when the lengths differ).
func maximumDifference(_ a: [Double], _ b: [Double]) -> Double {
    guard a.count == b.count else { return .infinity }
    return zip(a, b).map { abs($0 - $1) }.max() ?? 0
}
