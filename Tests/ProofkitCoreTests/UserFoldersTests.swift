import ProofkitCore
import Testing

@Suite("The user's XDG base folders: absolute paths only, as the specification says")
struct UserFoldersTests {
    @Test("the variable when absolute, else HOME's default, else nothing; a relative or empty value is ignored")
    func rules() {
        let home = ["HOME": "/home/amina"]
        #expect(UserFolders.state(home) == "/home/amina/.local/state")
        #expect(UserFolders.config(home) == "/home/amina/.config")
        #expect(UserFolders.cache(home) == "/home/amina/.cache")
        #expect(UserFolders.state(home.merging(["XDG_STATE_HOME": "/var/lib/x"]) { $1 }) == "/var/lib/x")
        for ignored in ["state", "./state", "", "~/state"] {
            #expect(UserFolders.state(home.merging(["XDG_STATE_HOME": ignored]) { $1 }) == "/home/amina/.local/state")
            #expect(UserFolders.config(home.merging(["XDG_CONFIG_HOME": ignored]) { $1 }) == "/home/amina/.config")
        }
        #expect(UserFolders.cache([:]) == nil)
        #expect(UserFolders.cache(["HOME": "relative"]) == nil)
        #expect(UserFolders.config(["HOME": "/"]) == "/.config")
    }
}
