/// Where each column of the list goes in a screen `width` cells wide: the state marks, the
/// name (all the room left), the size and the modification time. Narrow screens drop the time
/// first, then the size; 80 columns show everything.
public struct RowLayout: Equatable, Sendable {
    /// A column: its first cell and its width.
    public struct Column: Equatable, Sendable {
        public var x: Int
        public var width: Int
        public init(x: Int, width: Int) { self.x = x; self.width = width }
    }

    public static let marksWidth = 7
    public static let sizeWidth = 10
    public static let dateWidth = 16

    public var marks: Column
    public var name: Column
    public var size: Column?
    public var date: Column?

    public init(width: Int) {
        marks = Column(x: 0, width: Self.marksWidth)
        var right = width
        if width >= 60 {
            date = Column(x: width - Self.dateWidth, width: Self.dateWidth)
            right = width - Self.dateWidth - 2
        }
        if width >= 40 {
            size = Column(x: right - Self.sizeWidth, width: Self.sizeWidth)
            right -= Self.sizeWidth + 2
        }
        let x = Self.marksWidth + 1
        name = Column(x: x, width: max(1, right - x))
    }
}
