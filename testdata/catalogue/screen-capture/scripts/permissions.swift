import Foundation
print("ok")
