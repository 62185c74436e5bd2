/// The user's base folders of the XDG Base Directory specification, from an environment.
///
/// A variable holding a relative path is ignored, as the specification says ("If an
/// implementation encounters a relative path in any of these variables it should consider the
/// path invalid and ignore it"): `XDG_STATE_HOME=state` would otherwise put the alarm store in
/// whatever folder a command happened to run from.
public enum UserFolders {
    /// `$XDG_CONFIG_HOME`, else `$HOME/.config`; `nil` without either as an absolute path.
    public static func config(_ environment: [String: String]) -> String? {
        base("XDG_CONFIG_HOME", home: ".config", environment)
    }

    /// `$XDG_STATE_HOME`, else `$HOME/.local/state`; `nil` without either as an absolute path.
    public static func state(_ environment: [String: String]) -> String? {
        base("XDG_STATE_HOME", home: ".local/state", environment)
    }

    /// `$XDG_CACHE_HOME`, else `$HOME/.cache`; `nil` without either as an absolute path.
    public static func cache(_ environment: [String: String]) -> String? {
        base("XDG_CACHE_HOME", home: ".cache", environment)
    }

    static func base(_ variable: String, home folder: String, _ environment: [String: String]) -> String? {
        if let value = environment[variable], value.hasPrefix("/") { return value }
        if let home = environment["HOME"], home.hasPrefix("/") { return (home == "/" ? "" : home) + "/" + folder }
        return nil
    }
}
