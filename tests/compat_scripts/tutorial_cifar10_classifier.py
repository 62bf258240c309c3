"""Training a classifier: the CIFAR-10 tutorial, on generated 32x32 colour images (each class a
colour and a stripe direction, with noise) plus torchvision's FakeData as a chance-level check.
Writes batch.png and cifar_net.pth to the current folder, as the tutorial does.

usage: tutorial_cifar10_classifier.py [epochs] [num_workers] [seed]
"""
import sys

import matplotlib
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torchvision
import torchvision.transforms as transforms
from PIL import Image

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

EPOCHS = int(sys.argv[1]) if len(sys.argv) > 1 else 2
NUM_WORKERS = int(sys.argv[2]) if len(sys.argv) > 2 else 2
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 0

classes = ("plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")


class StripesCIFAR(torch.utils.data.Dataset):
    """Deterministic per index: class k has a base colour and stripes at angle 18k degrees."""

    def __init__(self, size, seed, transform=None):
        self.size, self.seed, self.transform = size, seed, transform

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        rng = np.random.default_rng((self.seed, index))
        label = int(rng.integers(0, 10))
        angle = np.pi * label / 10
        yy, xx = np.mgrid[0:32, 0:32]
        phase = rng.uniform(0, 2 * np.pi)
        stripes = np.sin((xx * np.cos(angle) + yy * np.sin(angle)) * 0.8 + phase)
        colour = np.array([(label * 37) % 256, (label * 91) % 256, (label * 53) % 256]) / 255
        img = 0.5 + 0.25 * stripes[..., None] * colour + 0.25 * (colour - 0.5)
        img = img + rng.normal(0, 0.15, size=img.shape)
        img = Image.fromarray((np.clip(img, 0, 1) * 255).astype(np.uint8))
        if self.transform is not None:
            img = self.transform(img)
        return img, label


transform = transforms.Compose(
    [transforms.ToTensor(),
     transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
batch_size = 4

trainset = StripesCIFAR(3000, seed=0, transform=transform)
trainloader = torch.utils.data.DataLoader(trainset, batch_size=batch_size, shuffle=True,
                                          num_workers=NUM_WORKERS)
testset = StripesCIFAR(500, seed=1, transform=transform)
testloader = torch.utils.data.DataLoader(testset, batch_size=batch_size, shuffle=False,
                                         num_workers=NUM_WORKERS)


def imshow(img):
    img = img / 2 + 0.5  # unnormalize
    npimg = img.numpy()
    plt.imshow(np.transpose(npimg, (1, 2, 0)))
    plt.savefig("batch.png")
    plt.close()


dataiter = iter(trainloader)
images, labels = next(dataiter)
grid = torchvision.utils.make_grid(images)
print("grid", tuple(grid.shape), images.dtype, round(float(images.min()), 2) >= -1.0)
imshow(grid)
print(" ".join(f"{classes[labels[j]]:5s}" for j in range(batch_size)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)  # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


torch.manual_seed(SEED)
net = Net()
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

for epoch in range(EPOCHS):
    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        inputs, labels = data
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
        if i % 100 == 99:
            print(f"[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 100:.3f}")
            running_loss = 0.0
print("Finished Training")

PATH = "./cifar_net.pth"
torch.save(net.state_dict(), PATH)

dataiter = iter(testloader)
images, labels = next(dataiter)
print("GroundTruth: ", " ".join(f"{classes[labels[j]]:5s}" for j in range(4)))
net = Net()
net.load_state_dict(torch.load(PATH, weights_only=True))
outputs = net(images)
_, predicted = torch.max(outputs, 1)
print("Predicted: ", " ".join(f"{classes[predicted[j]]:5s}" for j in range(4)))

correct = 0
total = 0
with torch.no_grad():
    for data in testloader:
        images, labels = data
        outputs = net(images)
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()
print(f"Accuracy of the network on the {total} test images: {100 * correct // total} %")

correct_pred = {classname: 0 for classname in classes}
total_pred = {classname: 0 for classname in classes}
with torch.no_grad():
    for data in testloader:
        images, labels = data
        outputs = net(images)
        _, predictions = torch.max(outputs, 1)
        for label, prediction in zip(labels, predictions):
            if label == prediction:
                correct_pred[classes[label]] += 1
            total_pred[classes[label]] += 1
for classname, correct_count in correct_pred.items():
    accuracy = 100 * float(correct_count) / total_pred[classname]
    print(f"Accuracy for class: {classname:5s} is {accuracy:.1f} %")

# chance level on pure noise: FakeData draws random images and labels
fake = torchvision.datasets.FakeData(size=200, image_size=(3, 32, 32), num_classes=10,
                                     transform=transform)
fakeloader = torch.utils.data.DataLoader(fake, batch_size=50)
hits = 0
with torch.no_grad():
    for images, labels in fakeloader:
        hits += (net(images).argmax(dim=1) == labels).sum().item()
print(f"FakeData accuracy {100 * hits / len(fake):.1f} % on {len(fake)} images "
      f"{tuple(images.shape)}")

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
net.to(device)
print("device", device)
